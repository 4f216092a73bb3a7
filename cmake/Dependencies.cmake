# Every dependency comes from Debian 12's packages.
find_package(Threads REQUIRED)
find_package(Boost 1.81 REQUIRED CONFIG)          # libboost1.81-dev (Asio, Beast; header-only parts)
find_package(fmt REQUIRED)                         # libfmt-dev
find_package(spdlog REQUIRED)                      # libspdlog-dev
find_package(yaml-cpp REQUIRED)                    # libyaml-cpp-dev
find_package(ZLIB REQUIRED)                        # zlib1g-dev (gzip)
find_package(PkgConfig REQUIRED)
pkg_check_modules(ZSTD REQUIRED IMPORTED_TARGET libzstd)   # libzstd-dev
pkg_check_modules(LZ4 REQUIRED IMPORTED_TARGET liblz4)     # liblz4-dev
pkg_check_modules(SNAPPY REQUIRED IMPORTED_TARGET snappy)  # libsnappy-dev
find_package(Python3 REQUIRED COMPONENTS Interpreter)      # runs the codec generator
if(BROKERD_TESTS)
  find_package(GTest REQUIRED)                     # libgtest-dev, libgmock-dev
endif()
if(BROKERD_BENCH)
  find_package(benchmark REQUIRED)                 # libbenchmark-dev
endif()
