"""Run by the InvokeAI venv's Python (test_invokeai_real.py): load the archfit
node pack with the real InvokeAI's node loader, parse and run its invocation
the way InvokeAI does, and write what happened as JSON.

    python invokeai_probe.py NODES_DIR BINDING_DIR DEMO_SITE RESULT_JSON

NODES_DIR holds a copy of the pack (archfit_preflight/). The binding comes
from BINDING_DIR (ARCHFIT_LIBRARY names the library); its site_packages() is
pointed at DEMO_SITE before the pack is imported, so both the start-up check
and the invocation judge the demo torch 2.5.1+cu124, not this venv's.
Nothing is asserted here: the test reads the JSON.
"""

import json
import logging
import sys
import time
import traceback
from importlib import metadata
from pathlib import Path
from types import SimpleNamespace

nodes_dir, binding_dir, demo_site, result_path = (Path(a) for a in sys.argv[1:5])
result = {"versions": {d: metadata.version(d) for d in ("invokeai", "torch", "pydantic")}}


class Records(logging.Handler):
    def __init__(self):
        super().__init__(logging.DEBUG)
        self.lines = []

    def emit(self, record):
        self.lines.append("%s %s" % (record.levelname, record.getMessage()))


def main():
    sys.path.insert(0, str(binding_dir))
    import archfit.host

    result["archfit_module"] = archfit.__file__
    archfit.host.site_packages = lambda: [str(demo_site)]

    start = time.monotonic()
    # As run_app does: the Graph import pulls in every core invocation first.
    from invokeai.app.invocations.baseinvocation import InvocationRegistry
    from invokeai.app.invocations.load_custom_nodes import load_custom_nodes
    from invokeai.app.services.config.config_default import get_config
    from invokeai.app.services.shared.graph import Graph
    from invokeai.app.services.shared.invocation_context import (
        InvocationContextData,
        build_invocation_context,
    )

    result["import_seconds"] = round(time.monotonic() - start, 2)
    result["core_invocations"] = len(list(InvocationRegistry.get_invocation_types()))

    loader_log = Records()
    loader = logging.getLogger("archfit-probe.loader")
    loader.setLevel(logging.DEBUG)
    loader.addHandler(loader_log)
    pack_log = Records()  # the pack logs to InvokeAILogger.get_logger("archfit")
    logging.getLogger("archfit").addHandler(pack_log)

    start = time.monotonic()
    load_custom_nodes(custom_nodes_path=nodes_dir, logger=loader)
    result["load_seconds"] = round(time.monotonic() - start, 3)
    result["loader_log"] = loader_log.lines

    module = sys.modules.get("archfit_preflight")
    result["pack_problem"] = getattr(module, "_problem", "not imported")
    result["pack_logger"] = "%s.%s" % (type(module._log).__module__, type(module._log).__name__)

    # run_app's check after loading custom nodes: every invocation's output is registered.
    result["unregistered_outputs"] = [
        inv.get_type() for inv in InvocationRegistry.get_invocation_classes()
        if inv.get_output_annotation() not in InvocationRegistry.get_output_classes()]

    cls = InvocationRegistry.get_invocation_for_type("archfit_preflight")
    output_cls = InvocationRegistry.get_output_for_type("archfit_preflight_output")
    result["registered"] = cls is not None
    result["output_registered"] = output_cls is not None
    if cls is None:
        return
    result["class"] = "%s.%s" % (cls.__module__, cls.__qualname__)
    result["output_annotation"] = cls.get_output_annotation().get_type()
    result["output_annotation_is_registered_class"] = cls.get_output_annotation() is output_cls
    result["ui_config"] = cls.UIConfig.model_dump(mode="json")
    result["use_cache_default"] = cls.model_fields["use_cache"].default
    schema = cls.model_json_schema()
    result["schema"] = {k: schema.get(k) for k in ("title", "category", "node_pack", "version",
                                                   "tags", "class")}
    result["schema_gpu"] = schema["properties"]["gpu"]
    result["output_schema_fields"] = sorted(output_cls.model_json_schema()["properties"])

    # A workflow's graph as InvokeAI parses one, then the node run the way the
    # session processor runs it (invoke_internal), with a real InvocationContext
    # over stand-in services (the pack never touches the context).
    graph = Graph.model_validate(
        {"id": "g", "nodes": {"preflight": {"id": "preflight", "type": "archfit_preflight",
                                            "gpu": "RTX 5090"}}, "edges": []})
    node = graph.nodes["preflight"]
    result["node"] = {"class": type(node).__name__, "gpu": node.gpu, "use_cache": node.use_cache}
    services = SimpleNamespace(configuration=get_config(), logger=logging.getLogger("archfit-probe"),
                               invocation_cache=None)
    data = InvocationContextData(queue_item=None, invocation=node, source_invocation_id=node.id)
    context = build_invocation_context(services=services, data=data, is_canceled=lambda: False)
    result["context"] = "%s.%s" % (type(context).__module__, type(context).__name__)
    start = time.monotonic()
    output = node.invoke_internal(context, services)
    result["invoke_seconds"] = round(time.monotonic() - start, 3)
    result["output_class"] = type(output).__name__
    result["output_is_registered_class"] = type(output) is output_cls
    dumped = output.model_dump(mode="json")
    result["output"] = dumped
    again = InvocationRegistry.get_output_typeadapter().validate_python(dumped)
    result["output_round_trip"] = type(again) is output_cls and again == output

    h100 = Graph.model_validate({"nodes": {"n": {"id": "n", "type": "archfit_preflight",
                                                 "gpu": "H100"}}}).nodes["n"]
    result["h100_fits"] = h100.invoke_internal(context, services).fits

    thread = module.startup_check
    if thread is not None:
        thread.join(timeout=120)
    result["startup_thread_done"] = thread is not None and not thread.is_alive()
    result["pack_log"] = pack_log.lines


try:
    main()
except BaseException:  # noqa: BLE001 - the test shows it
    result["exception"] = traceback.format_exc()
Path(result_path).write_text(json.dumps(result, indent=2))
