# xxhash (Debian libxxhash-dev) ships pkg-config only: xxhash::xxhash.
include(${CMAKE_CURRENT_LIST_DIR}/FindPkgConfigModule.cmake)
mapp_pkgconfig_package(xxhash libxxhash xxhash::xxhash)
