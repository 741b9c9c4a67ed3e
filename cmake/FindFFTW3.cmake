include(${CMAKE_CURRENT_LIST_DIR}/FindPkgConfigModule.cmake)
mapp_pkgconfig_package(FFTW3 fftw3 FFTW3::fftw3)
