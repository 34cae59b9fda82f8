"""The libtorch adapter's CUDA path (host_adapters/libtorch, archfit/torch.hpp)
in the form an op author ships it: a torch extension built with
torch.utils.cpp_extension against the torch installed here and an installed
archfit SDK, whose CUDA kernel launches imagegen_ops.rmsnorm through archfit.

It builds tests/libtorch/rms_norm_op.cpp, the op the CPU-only adapter tests
register, with ARCHFIT_TORCH_CUDA=1 and checks, on GPU 0:
  - the CUDA kernel against the op's CPU kernel (the reference);
  - that the launch goes on torch's current stream, so it orders with
    torch's own work on a side stream;
  - that it replays inside a CUDA graph torch captured;
  - that bad inputs come back as torch RuntimeErrors naming the argument.

  ARCHFIT_PREFIX=<installed SDK> python3 tests/gpu/torch_adapter_cuda.py [--build-only|--require-gpu]

tests/gpu/run.sh runs it with the pack's SDK. Exit 77 (skipped, saying why)
without torch, without torch's CUDA or without a GPU; 0 when every check
passes; 1 when one fails or the extension does not build. --build-only is
for a machine without a GPU: it builds the extension, checks its CPU kernel
and exits 77, saying the CUDA checks did not run. --require-gpu (run.sh
passes it where nvidia-smi lists a GPU) makes "torch sees no GPU" a failure.
A torch that is installed but does not import is a failure, never a skip.
"""
import os
import pathlib
import sys
import unittest

SKIPPED = 77
REPO = pathlib.Path(__file__).resolve().parents[2]


def skip(reason):
    print(f"torch adapter CUDA path: skipped: {reason}")
    sys.exit(SKIPPED)


def fail(reason):
    print(f"torch adapter CUDA path: FAILED: {reason}")
    sys.exit(1)


BUILD_ONLY = "--build-only" in sys.argv[1:]
REQUIRE_GPU = "--require-gpu" in sys.argv[1:]
try:
    import torch
    from torch.utils import cpp_extension
except ModuleNotFoundError as error:
    skip(f"{sys.executable} has no torch ({error})")
except ImportError as error:  # torch is there and does not load: that is no skip
    fail(f"torch is installed for {sys.executable} but does not import: {error}")
if torch.version.cuda is None:
    skip(f"torch {torch.__version__} was built without CUDA")
HAVE_GPU = torch.cuda.is_available()
if not HAVE_GPU and REQUIRE_GPU:
    fail(f"a GPU is here, but torch {torch.__version__} (CUDA {torch.version.cuda}) sees none")
if not HAVE_GPU and not BUILD_ONLY:
    skip(f"torch {torch.__version__} (CUDA {torch.version.cuda}) sees no GPU here")

PREFIX = pathlib.Path(os.environ.get("ARCHFIT_PREFIX", "")).resolve()
if not (PREFIX / "include" / "archfit" / "torch.hpp").is_file():
    print(f"torch adapter CUDA path: ARCHFIT_PREFIX={os.environ.get('ARCHFIT_PREFIX')!r} "
          "is not an installed archfit SDK (no include/archfit/torch.hpp)")
    sys.exit(1)

EPS = 1e-6
# kernels/rmsnorm_reference.hpp: kRmsnormToleranceF32, relative, floored at 1.
TOLERANCE = 1e-5


def build_op_library():
    """Builds and loads the extension; its TORCH_LIBRARY registers archfit_test::rms_norm."""
    library_dir = PREFIX / "lib"
    if not HAVE_GPU:
        # torch picks nvcc arch flags from the GPUs it sees, and fails on none;
        # this extension has no .cu file, so any arch will do.
        os.environ.setdefault("TORCH_CUDA_ARCH_LIST", "9.0")
    cpp_extension.load(
        name="archfit_rms_norm_op",
        sources=[str(REPO / "tests" / "libtorch" / "rms_norm_op.cpp")],
        extra_cflags=["-O2", "-DARCHFIT_TORCH_CUDA=1"],
        extra_include_paths=[str(PREFIX / "include"), str(REPO / "kernels"),
                             str(REPO / "tests" / "libtorch")],
        extra_ldflags=[f"-L{library_dir}", "-larchfit", f"-Wl,-rpath,{library_dir}"],
        with_cuda=True,
        is_python_module=False,
        verbose=False,
    )
    return torch.ops.archfit_test.rms_norm


def worst_relative_error(actual, expected):
    actual, expected = actual.double().cpu(), expected.double().cpu()
    return ((actual - expected).abs() / expected.abs().clamp(min=1.0)).max().item()


def needs_gpu(test):
    return unittest.skipUnless(HAVE_GPU, "no GPU here (--build-only)")(test)


class TorchAdapterCuda(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.rms_norm = staticmethod(build_op_library())
        generator = torch.Generator().manual_seed(7)
        cls.x = torch.randn(64, 1000, generator=generator) * 3
        cls.weight = torch.randn(1000, generator=generator)
        cls.expected = cls.rms_norm(cls.x, cls.weight, EPS)  # the CPU kernel

    def test_the_cpu_kernel_is_rms_norm(self):
        by_torch = self.x * torch.rsqrt(self.x.pow(2).mean(dim=1, keepdim=True) + EPS) * self.weight
        self.assertLessEqual(worst_relative_error(self.expected, by_torch), TOLERANCE)

    @needs_gpu
    def test_the_cuda_kernel_matches_the_cpu_kernel(self):
        y = self.rms_norm(self.x.cuda(), self.weight.cuda(), EPS)
        torch.cuda.synchronize()
        self.assertEqual(y.device.type, "cuda")
        self.assertLessEqual(worst_relative_error(y, self.expected), TOLERANCE)

    @needs_gpu
    def test_the_launch_goes_on_torchs_current_stream(self):
        # On a side stream (torch makes those non-blocking): a long sleep, then
        # the input is written, then the op. Only a launch on that same stream
        # is ordered after the write; one on any other stream reads the zeros.
        x = torch.zeros_like(self.x, device="cuda")
        source = self.x.cuda()
        weight = self.weight.cuda()
        torch.cuda.synchronize()
        side = torch.cuda.Stream()
        with torch.cuda.stream(side):
            torch.cuda._sleep(200_000_000)  # about 0.1 s at the H200's clock
            x.copy_(source)
            y = self.rms_norm(x, weight, EPS)
        side.synchronize()
        self.assertLessEqual(worst_relative_error(y, self.expected), TOLERANCE)

    @needs_gpu
    def test_it_replays_in_a_captured_cuda_graph(self):
        x = torch.zeros_like(self.x, device="cuda")
        weight = self.weight.cuda()
        self.rms_norm(x, weight, EPS)  # loaded before capture: capture only records launches
        torch.cuda.synchronize()
        graph = torch.cuda.CUDAGraph()
        with torch.cuda.graph(graph):
            y = self.rms_norm(x, weight, EPS)
        x.copy_(self.x.cuda())
        graph.replay()
        torch.cuda.synchronize()
        self.assertLessEqual(worst_relative_error(y, self.expected), TOLERANCE)

    @needs_gpu
    def test_a_weight_on_another_device_is_a_runtime_error_naming_it(self):
        with self.assertRaisesRegex(RuntimeError, "weight on cpu"):
            self.rms_norm(self.x.cuda(), self.weight, EPS)

    @needs_gpu
    def test_a_half_tensor_is_a_runtime_error_naming_its_type(self):
        with self.assertRaisesRegex(RuntimeError, "must be float32"):
            self.rms_norm(self.x.cuda().half(), self.weight.cuda().half(), EPS)


if __name__ == "__main__":
    device = torch.cuda.get_device_name(0) if HAVE_GPU else "no GPU (--build-only)"
    print(f"torch adapter CUDA path: torch {torch.__version__} (CUDA {torch.version.cuda}) "
          f"on {device}, archfit from {PREFIX}")
    result = unittest.main(argv=sys.argv[:1], exit=False, verbosity=2).result
    if not result.wasSuccessful():
        sys.exit(1)
    if not HAVE_GPU:
        print("torch adapter CUDA path: built, CPU kernel checked; the CUDA checks did not run")
        sys.exit(SKIPPED)
