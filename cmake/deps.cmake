# Third-party dependencies: Debian 12 -dev packages (installed by scripts/setup.sh)
# and the tree-sitter Python grammar fetched from PyPI as a source distribution.
find_package(nlohmann_json 3 REQUIRED)
find_package(CLI11 REQUIRED)
find_package(fmt REQUIRED)
find_package(Eigen3 REQUIRED NO_MODULE)
find_package(Threads REQUIRED)
if(KILN_BUILD_TESTS)
  find_package(GTest REQUIRED)
endif()

# Static archives where Debian ships them, so the binary runs on other distributions.
find_library(KILN_TREE_SITTER_LIB NAMES libtree-sitter.a tree-sitter REQUIRED)
find_library(KILN_SQLITE_LIB NAMES libsqlite3.a sqlite3 REQUIRED)
find_path(KILN_XXHASH_INCLUDE xxhash.h REQUIRED)

add_library(kiln_fmt INTERFACE)
target_link_libraries(kiln_fmt INTERFACE fmt::fmt-header-only)

add_library(kiln_sqlite INTERFACE)
target_link_libraries(kiln_sqlite INTERFACE ${KILN_SQLITE_LIB} Threads::Threads ${CMAKE_DL_LIBS} m)

set(KILN_GRAMMAR_DIR ${PROJECT_SOURCE_DIR}/third_party/tree-sitter-python)
if(NOT EXISTS ${KILN_GRAMMAR_DIR}/src/parser.c)
  message(FATAL_ERROR "tree-sitter Python grammar missing at ${KILN_GRAMMAR_DIR}; run scripts/setup.sh "
                      "(or scripts/fetch_grammar.sh) first")
endif()
add_library(kiln_ts_python STATIC ${KILN_GRAMMAR_DIR}/src/parser.c ${KILN_GRAMMAR_DIR}/src/scanner.c)
target_include_directories(kiln_ts_python PRIVATE ${KILN_GRAMMAR_DIR}/src)
set_target_properties(kiln_ts_python PROPERTIES C_STANDARD 11 POSITION_INDEPENDENT_CODE ON)
target_compile_options(kiln_ts_python PRIVATE -w -O2)

# Debian's cpp-httplib is a shared library built with OpenSSL, zlib and brotli support (its header must see the
# same definitions). The GPU hosts lack it: the kiln binary carries it beside itself (tools/kiln, $ORIGIN).
find_library(KILN_HTTPLIB_LIB NAMES cpp-httplib REQUIRED)
add_library(kiln_httplib INTERFACE)
target_link_libraries(kiln_httplib INTERFACE ${KILN_HTTPLIB_LIB} Threads::Threads)
target_compile_definitions(kiln_httplib INTERFACE CPPHTTPLIB_OPENSSL_SUPPORT CPPHTTPLIB_ZLIB_SUPPORT
                           CPPHTTPLIB_BROTLI_SUPPORT)
