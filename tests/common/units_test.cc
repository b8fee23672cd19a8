#include <catch2/catch.hpp>

#include "common/units.h"

using accel::FormatBytes;
using accel::FormatCount;
using accel::ParseByteSize;

TEST_CASE("ParseByteSize reads bytes and binary and decimal units", "[units]") {
  CHECK(ParseByteSize("1048576") == int64_t{1048576});
  CHECK(ParseByteSize("0") == int64_t{0});
  CHECK(ParseByteSize("512B") == int64_t{512});
  CHECK(ParseByteSize("8GiB") == int64_t{8} << 30);
  CHECK(ParseByteSize("8 GiB") == int64_t{8} << 30);
  CHECK(ParseByteSize("512MiB") == int64_t{512} << 20);
  CHECK(ParseByteSize("4KiB") == 4096);
  CHECK(ParseByteSize("1TiB") == int64_t{1} << 40);
  CHECK(ParseByteSize("512MB") == int64_t{512000000});
  CHECK(ParseByteSize("2kB") == 2000);
  CHECK(ParseByteSize("2KB") == 2000);
  CHECK(ParseByteSize("80GB") == int64_t{80000000000});
  CHECK(ParseByteSize("1.5GiB") == int64_t{3} << 29);
}

TEST_CASE("ParseByteSize rejects malformed sizes", "[units]") {
  for (const char* bad : {"", "GiB", "8gib", "8 gb", "-1", "1.5", "1.5B", ".5GiB", "5.GiB",
                          "1..5GiB", "8  GiB", "8GiBs", "lots", "99999999999999999999",
                          "9999999999TiB"}) {
    INFO(bad);
    CHECK_FALSE(ParseByteSize(bad).has_value());
  }
}

TEST_CASE("FormatBytes uses binary units with two decimals", "[units]") {
  CHECK(FormatBytes(12) == "12 B");
  CHECK(FormatBytes(1024) == "1.00 KiB");
  CHECK(FormatBytes(int64_t{3} << 29) == "1.50 GiB");
  CHECK(FormatBytes(int64_t{512} << 20) == "512.00 MiB");
}

TEST_CASE("FormatCount groups thousands", "[units]") {
  CHECK(FormatCount(0) == "0");
  CHECK(FormatCount(999) == "999");
  CHECK(FormatCount(1000) == "1,000");
  CHECK(FormatCount(124439808) == "124,439,808");
  CHECK(FormatCount(-1234567) == "-1,234,567");
}
