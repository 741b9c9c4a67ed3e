include(${CMAKE_CURRENT_LIST_DIR}/FindPkgConfigModule.cmake)
mapp_pkgconfig_package(libfyaml libfyaml libfyaml::libfyaml)
