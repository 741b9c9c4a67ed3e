# Shared helper: wrap a pkg-config module as an imported target so that
# find_package(<Name>) works for libraries that ship no CMake config.
function(mapp_pkgconfig_package name module target)
  find_package(PkgConfig QUIET)
  if(PkgConfig_FOUND)
    pkg_check_modules(_${name} QUIET IMPORTED_TARGET GLOBAL ${module})
  endif()
  include(FindPackageHandleStandardArgs)
  find_package_handle_standard_args(${name} REQUIRED_VARS _${name}_LINK_LIBRARIES
                                    VERSION_VAR _${name}_VERSION)
  if(${name}_FOUND AND NOT TARGET ${target})
    add_library(${target} INTERFACE IMPORTED GLOBAL)
    target_link_libraries(${target} INTERFACE PkgConfig::_${name})
  endif()
  set(${name}_FOUND ${${name}_FOUND} PARENT_SCOPE)
endfunction()
