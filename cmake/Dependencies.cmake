# Every external dependency, in one place. All come from Debian 12 packages (see scripts/deps.sh);
# there is no FetchContent because CI reaches only the package registries.
find_package(Boost 1.81 REQUIRED CONFIG)
find_package(OpenSSL 3 REQUIRED)
find_package(nlohmann_json 3.11 REQUIRED)
find_package(yaml-cpp REQUIRED)
find_package(spdlog REQUIRED)
find_package(Threads REQUIRED)

# yaml-cpp 0.7 (Debian 12) exports a plain `yaml-cpp` target; 0.8 adds the namespaced one.
if(TARGET yaml-cpp AND NOT TARGET yaml-cpp::yaml-cpp)
  add_library(yaml-cpp::yaml-cpp ALIAS yaml-cpp)
endif()
