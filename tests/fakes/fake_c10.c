/* Stands in for torch's libc10.so: only its name and where it was loaded
 * from matter (env/cuda_libraries.hpp, site_packages_of_loaded_torch). */
int archfit_fake_c10(void) { return 10; }
