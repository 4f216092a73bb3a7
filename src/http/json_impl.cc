// Boost.JSON, compiled once here (header-only mode: no library beyond libboost1.81-dev).
#include <boost/json/src.hpp>
