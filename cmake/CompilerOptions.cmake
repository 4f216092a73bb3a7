# Warnings, ccache and the flags every target shares.
find_program(CCACHE_PROGRAM ccache)
if(CCACHE_PROGRAM)
  set(CMAKE_CXX_COMPILER_LAUNCHER ${CCACHE_PROGRAM})
  set(CMAKE_C_COMPILER_LAUNCHER ${CCACHE_PROGRAM})
endif()

add_compile_options(-Wall -Wextra -Wno-unused-parameter -fno-omit-frame-pointer)
if(CMAKE_CXX_COMPILER_ID STREQUAL "GNU")
  # GCC 12 warns on coroutine frames and std::variant falsely.
  add_compile_options(-Wno-maybe-uninitialized -Wno-array-bounds -Wno-stringop-overflow)
endif()

# Asio is compiled once (src/net/asio_impl.cc), not in every translation unit.
add_compile_definitions(BOOST_ASIO_SEPARATE_COMPILATION BOOST_ASIO_NO_DEPRECATED
                        SPDLOG_FMT_EXTERNAL)

# A helper that declares a module library with the project's include layout.
function(brokerd_module name)
  cmake_parse_arguments(M "" "" "SOURCES;DEPS" ${ARGN})
  add_library(brokerd_${name} STATIC ${M_SOURCES})
  target_include_directories(brokerd_${name}
    PUBLIC ${CMAKE_SOURCE_DIR}/include ${CMAKE_BINARY_DIR}/generated
    PRIVATE ${CMAKE_SOURCE_DIR}/src)
  target_link_libraries(brokerd_${name} PUBLIC ${M_DEPS})
endfunction()

# Sanitizer builds for the test command: BROKERD_SANITIZE=address,undefined or thread.
# Every report is fatal, so a test that triggers one fails.
set(BROKERD_SANITIZE "" CACHE STRING "Sanitizers to build with (address,undefined | thread), empty for none")
if(BROKERD_SANITIZE)
  add_compile_options(-fsanitize=${BROKERD_SANITIZE} -fno-sanitize-recover=all -O1)
  add_link_options(-fsanitize=${BROKERD_SANITIZE})
  if(BROKERD_SANITIZE MATCHES "thread")
    # ThreadSanitizer does not model std::atomic_thread_fence, which Asio's reference counts
    # (executors, handlers) use by default: without this, freeing an executor copied across
    # threads reads as a race. Asio then counts with acquire-release atomics TSan can follow.
    add_compile_definitions(BOOST_ASIO_DISABLE_STD_ATOMIC)
  endif()
endif()
