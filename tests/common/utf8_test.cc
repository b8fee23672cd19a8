#include <catch2/catch.hpp>

#include "common/utf8.h"

namespace accel {
namespace {

TEST_CASE("utf-8 validation follows RFC 3629") {
  CHECK(IsValidUtf8("plain ascii\n"));
  CHECK(IsValidUtf8("caf\xC3\xA9 \xE2\x82\xAC \xF0\x9F\x98\x80"));
  CHECK(IsValidUtf8(""));
  CHECK_FALSE(IsValidUtf8("\xC3"));              // truncated
  CHECK_FALSE(IsValidUtf8("\xC0\xAF"));          // overlong '/'
  CHECK_FALSE(IsValidUtf8("\xE0\x80\xAF"));      // overlong, three bytes
  CHECK_FALSE(IsValidUtf8("\xED\xA0\x80"));      // surrogate
  CHECK_FALSE(IsValidUtf8("\xF4\x90\x80\x80"));  // above U+10FFFF
  CHECK_FALSE(IsValidUtf8("\xF5\x80\x80\x80"));  // lead byte past F4
  CHECK_FALSE(IsValidUtf8("latin-1 caf\xE9"));
}

TEST_CASE("a sequence's length is its maximal subpart when ill-formed") {
  CHECK(Utf8SequenceAt("a", 0).length == 1);
  CHECK(Utf8SequenceAt("\xF0\x9F\x98\x80", 0).length == 4);
  CHECK(Utf8SequenceAt("\xF0\x9F\x98\x80", 0).whole);
  Utf8Sequence truncated = Utf8SequenceAt("\xF0\x9F\x98x", 0);
  CHECK(truncated.length == 3);
  CHECK_FALSE(truncated.whole);
  Utf8Sequence stray = Utf8SequenceAt("\x80x", 0);
  CHECK(stray.length == 1);
  CHECK_FALSE(stray.whole);
}

TEST_CASE("replacing ill-formed bytes: one U+FFFD per byte or per maximal subpart") {
  CHECK(ReplaceInvalidUtf8("ok \xe6\x97\xa5 \xed\xa0\x80") == "ok \xe6\x97\xa5 \xEF\xBF\xBD\xEF\xBF\xBD\xEF\xBF\xBD");
  CHECK(ReplaceInvalidUtf8("\xF0\x9F\x99x") == "\uFFFD\uFFFD\uFFFDx");
  CHECK(DecodeUtf8Lossy("\xF0\x9F\x99") == "\uFFFD");
  CHECK(DecodeUtf8Lossy("\xF0\x9F\x99x\xC0\xAF") == "\uFFFDx\uFFFD\uFFFD");
}

}  // namespace
}  // namespace accel
