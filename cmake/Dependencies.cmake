# Third-party dependencies, all from Debian packages (see docs/building.md).
find_package(Threads REQUIRED)
find_package(ZLIB REQUIRED)
find_package(fmt REQUIRED)
find_package(simdjson REQUIRED)
find_package(CLI11 CONFIG REQUIRED)
find_package(doctest REQUIRED)

# LLVM ADT: headers only from the include dir, plus the out-of-line symbols of
# LLVMSupport. We do not use llvm-config --cxxflags (it forces -std=c++14).
set(DD_LLVM_ROOT "/usr/lib/llvm-14" CACHE PATH "LLVM 14 installation root")
find_path(DD_LLVM_INCLUDE_DIR llvm/ADT/SmallVector.h
  HINTS "${DD_LLVM_ROOT}/include" REQUIRED)
find_library(DD_LLVM_SUPPORT_LIB libLLVMSupport.a
  HINTS "${DD_LLVM_ROOT}/lib" REQUIRED)
find_library(DD_LLVM_DEMANGLE_LIB libLLVMDemangle.a
  HINTS "${DD_LLVM_ROOT}/lib" REQUIRED)
find_library(DD_TINFO_LIB tinfo REQUIRED)
add_library(dd_llvm INTERFACE)
target_include_directories(dd_llvm SYSTEM INTERFACE "${DD_LLVM_INCLUDE_DIR}")
target_link_libraries(dd_llvm INTERFACE
  "${DD_LLVM_SUPPORT_LIB}" "${DD_LLVM_DEMANGLE_LIB}" "${DD_TINFO_LIB}"
  Threads::Threads ${CMAKE_DL_LIBS} ZLIB::ZLIB)
