# kiln_module(NAME <name> SOURCES <files>... [TESTS <files>...]
#             [PUBLIC_DEPS <targets>...] [PRIVATE_DEPS <targets>...] [TEST_DEPS <targets>...])
#
# One library target per src/ folder: kiln_<name>, built from the listed sources. Its include root exposes
# only its own headers: `#include "<name>/x.h"` resolves through ${CMAKE_BINARY_DIR}/include/<name>, a folder
# holding one link named <name> to the module's source folder, so a module sees another module's headers
# only when it links that module (PUBLIC_DEPS: the module's headers include it; PRIVATE_DEPS: only its
# sources do). The listed tests form one GoogleTest executable, kiln_<name>_test, registered with CTest
# (label "unit").
function(kiln_module)
  cmake_parse_arguments(M "" "NAME" "SOURCES;TESTS;PUBLIC_DEPS;PRIVATE_DEPS;TEST_DEPS" ${ARGN})
  set(_t kiln_${M_NAME})
  set(_root ${CMAKE_BINARY_DIR}/include/${M_NAME})
  file(MAKE_DIRECTORY ${_root})
  file(CREATE_LINK ${CMAKE_CURRENT_SOURCE_DIR} ${_root}/${M_NAME} SYMBOLIC)
  list(TRANSFORM M_SOURCES PREPEND ${CMAKE_CURRENT_SOURCE_DIR}/)
  if(M_SOURCES)
    add_library(${_t} STATIC ${M_SOURCES})
    target_include_directories(${_t} PUBLIC ${_root})
    target_link_libraries(${_t} PUBLIC ${M_PUBLIC_DEPS} PRIVATE ${M_PRIVATE_DEPS})
  else()
    add_library(${_t} INTERFACE)
    target_include_directories(${_t} INTERFACE ${_root})
    target_link_libraries(${_t} INTERFACE ${M_PUBLIC_DEPS} ${M_PRIVATE_DEPS})
  endif()
  if(KILN_BUILD_TESTS AND M_TESTS)
    list(TRANSFORM M_TESTS PREPEND ${CMAKE_CURRENT_SOURCE_DIR}/)
    add_executable(${_t}_test ${M_TESTS})
    target_link_libraries(${_t}_test PRIVATE ${_t} ${M_PRIVATE_DEPS} ${M_TEST_DEPS} GTest::gmock GTest::gtest_main)
    target_compile_definitions(${_t}_test PRIVATE
      KILN_SOURCE_DIR="${PROJECT_SOURCE_DIR}"
      KILN_CORPUS_DIR="${PROJECT_SOURCE_DIR}/../shared/corpus")
    gtest_discover_tests(${_t}_test PROPERTIES LABELS unit DISCOVERY_TIMEOUT 60)
  endif()
endfunction()
