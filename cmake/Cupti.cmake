# CUPTI, for the collector in runtime/ (optional).
#
# DD_CUPTI=AUTO builds the collector when CUPTI is found, ON requires it,
# OFF skips it. Sets DD_HAVE_CUPTI, the target dd_cupti (headers and
# libcupti) and DD_CUPTI_LIBRARY_FILE (the libcupti the collector loads; it
# is also the NVTX injection library).
set(DD_CUPTI AUTO CACHE STRING "Build the CUPTI collector: AUTO, ON or OFF")
set_property(CACHE DD_CUPTI PROPERTY STRINGS AUTO ON OFF)
set(DD_CUDA_ROOT "/usr/local/cuda" CACHE PATH
    "CUDA toolkit to look for CUPTI in when find_package(CUDAToolkit) fails")

set(DD_HAVE_CUPTI OFF)
string(TOUPPER "${DD_CUPTI}" _dd_cupti)
if(NOT _dd_cupti STREQUAL "OFF")
  find_package(CUDAToolkit QUIET)
  set(_dd_cupti_inc "")
  set(_dd_cupti_lib "")
  if(TARGET CUDA::cupti)
    get_target_property(_dd_cupti_lib CUDA::cupti IMPORTED_LOCATION)
    set(_dd_cupti_inc "${CUDAToolkit_CUPTI_INCLUDE_DIR}")
  endif()
  if(NOT _dd_cupti_lib OR NOT EXISTS "${_dd_cupti_inc}/cupti.h")
    # Toolkits without CMake support (wheels unpacked under /usr/local/cuda).
    find_path(DD_CUPTI_INCLUDE_DIR cupti.h
      HINTS "${DD_CUDA_ROOT}/include" "${DD_CUDA_ROOT}/extras/CUPTI/include"
      NO_DEFAULT_PATH)
    find_library(DD_CUPTI_LIBRARY cupti
      HINTS "${DD_CUDA_ROOT}/lib64" "${DD_CUDA_ROOT}/lib"
            "${DD_CUDA_ROOT}/extras/CUPTI/lib64"
      NO_DEFAULT_PATH)
    if(DD_CUPTI_INCLUDE_DIR AND DD_CUPTI_LIBRARY)
      set(_dd_cupti_inc "${DD_CUPTI_INCLUDE_DIR}")
      set(_dd_cupti_lib "${DD_CUPTI_LIBRARY}")
    endif()
  endif()
  if(_dd_cupti_lib AND EXISTS "${_dd_cupti_inc}/cupti.h"
     AND EXISTS "${_dd_cupti_inc}/generated_nvtx_meta.h")
    set(DD_HAVE_CUPTI ON)
  elseif(_dd_cupti STREQUAL "ON")
    message(FATAL_ERROR "DD_CUPTI=ON but CUPTI was not found (looked for "
      "cupti.h and libcupti with find_package(CUDAToolkit) and under "
      "DD_CUDA_ROOT=${DD_CUDA_ROOT})")
  endif()
endif()

if(DD_HAVE_CUPTI)
  file(REAL_PATH "${_dd_cupti_lib}" DD_CUPTI_LIBRARY_FILE)
  get_filename_component(DD_CUPTI_LIBRARY_DIR "${DD_CUPTI_LIBRARY_FILE}"
    DIRECTORY)
  add_library(dd_cupti INTERFACE)
  target_include_directories(dd_cupti SYSTEM INTERFACE "${_dd_cupti_inc}")
  target_link_libraries(dd_cupti INTERFACE "${DD_CUPTI_LIBRARY_FILE}")
  message(STATUS "CUPTI: ${DD_CUPTI_LIBRARY_FILE} (the collector is built)")
else()
  set(DD_CUPTI_LIBRARY_FILE "")
  if(_dd_cupti STREQUAL "OFF")
    message(STATUS "CUPTI: not used (DD_CUPTI=OFF); the collector is not built")
  else()
    message(STATUS "CUPTI: not found; the collector is not built")
  endif()
endif()
