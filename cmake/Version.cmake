# Writes OUT (a header) with DD_VERSION "VERSION (commit HASH[, modified])"
# from `git describe` in SRC, rewriting it only when it changes, so that
# `ddscript --version` names the commit it was built from. Run at every
# build by the ddscript_version target (src/driver/CMakeLists.txt).
execute_process(
  COMMAND git -C "${SRC}" rev-parse --short=12 HEAD
  OUTPUT_VARIABLE HASH OUTPUT_STRIP_TRAILING_WHITESPACE
  ERROR_QUIET RESULT_VARIABLE RC)
if(RC EQUAL 0 AND HASH)
  execute_process(
    COMMAND git -C "${SRC}" status --porcelain --untracked-files=no
    OUTPUT_VARIABLE DIRTY OUTPUT_STRIP_TRAILING_WHITESPACE ERROR_QUIET)
  set(TEXT "${VERSION} (commit ${HASH}")
  if(DIRTY)
    string(APPEND TEXT ", modified")
  endif()
  string(APPEND TEXT ")")
else()
  set(TEXT "${VERSION} (not built from a git checkout)")
endif()
file(WRITE "${OUT}.tmp" "#define DD_VERSION \"${TEXT}\"\n")
execute_process(COMMAND ${CMAKE_COMMAND} -E copy_if_different "${OUT}.tmp"
                        "${OUT}")
file(REMOVE "${OUT}.tmp")
