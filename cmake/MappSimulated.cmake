# The SimGrid SMPI build (preset `simgrid`, MAPP_SIMULATED=ON): smpicc is the
# C compiler, so every rank of a run is a thread of one simulated process on
# a modelled platform (envs/sim-*.yaml), and MPI is SimGrid's, not Open MPI's.
#
# HDF5: parallel HDF5 (libhdf5-openmpi-dev) is compiled against Open MPI's
# MPI and cannot run on SMPI's. This build links serial HDF5 (Debian
# libhdf5-dev) and writes answers through mapp_h5_gather.c: rank 0 gathers
# every rank's slab and writes the one file, which `mapp check` and h5diff
# read exactly as they read a parallel-HDF5 answer. Readers open the file on
# every rank (serial HDF5, read-only).
get_filename_component(_mapp_cc_name "${CMAKE_C_COMPILER}" NAME)
if(NOT _mapp_cc_name STREQUAL "smpicc")
  message(FATAL_ERROR "MAPP_SIMULATED=ON needs smpicc as the C compiler (Debian: libsimgrid-dev; "
                      "cmake --preset simgrid sets it); got ${CMAKE_C_COMPILER}")
endif()
find_program(MAPP_SMPIRUN smpirun REQUIRED)

# smpicc compiles and links against SimGrid's MPI itself: MPI::MPI_C adds nothing.
add_library(MPI::MPI_C INTERFACE IMPORTED GLOBAL)

set(HDF5_PREFER_PARALLEL FALSE)
find_package(HDF5 REQUIRED COMPONENTS C)
if(HDF5_IS_PARALLEL)
  message(FATAL_ERROR "the simgrid build needs serial HDF5 (Debian: libhdf5-dev); found a parallel one "
                      "(${HDF5_C_LIBRARIES}), built for another MPI")
endif()
