# mg_library_exports(NM LIB OUT): the dynamic symbols the shared library LIB
# defines (nm -D --defined-only), without the absolute ones and the markers
# some linkers add to any shared library; sorted, each once.
function(mg_library_exports NM LIB OUT)
  execute_process(COMMAND "${NM}" -D --defined-only "${LIB}" RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "${NM} -D --defined-only ${LIB} failed (exit ${rc}): ${err}")
  endif()
  # "0000000000001234 T name"
  string(REPLACE "\n" ";" lines "${out}")
  set(exported "")
  foreach(line IN LISTS lines)
    if(line MATCHES "^[0-9a-fA-F]* *([BbDdGgiRrSsTtuVvWw]) +([^ @]+)")
      set(name "${CMAKE_MATCH_2}")
      if(NOT name MATCHES "^(_init|_fini|_edata|_end|__bss_start)$")
        list(APPEND exported "${name}")
      endif()
    endif()
  endforeach()
  list(REMOVE_DUPLICATES exported)
  list(SORT exported)
  set(${OUT} "${exported}" PARENT_SCOPE)
endfunction()
