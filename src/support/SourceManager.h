//===- SourceManager.h - Source buffers and locations ------------*- C++
//-*-===//
//
// Owns the text of every .dd file a run reads. A SourceRange names a buffer
// and a byte range in it; line and column are computed on demand (1-based,
// columns count bytes).
//
//===----------------------------------------------------------------------===//
#ifndef DD_SUPPORT_SOURCEMANAGER_H
#define DD_SUPPORT_SOURCEMANAGER_H

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace dd {

using BufferId = uint32_t;
constexpr BufferId NoBuffer = ~0u;

struct SourceRange {
  BufferId Buffer = NoBuffer;
  uint32_t Begin = 0, End = 0; ///< byte offsets, End exclusive
  bool valid() const { return Buffer != NoBuffer; }
  /// The smallest range covering both.
  static SourceRange join(SourceRange A, SourceRange B) {
    if (!A.valid())
      return B;
    if (!B.valid() || A.Buffer != B.Buffer)
      return A;
    return {A.Buffer, A.Begin < B.Begin ? A.Begin : B.Begin,
            A.End > B.End ? A.End : B.End};
  }
};

struct LineColumn {
  uint32_t Line = 0, Column = 0;
};

class SourceManager {
public:
  BufferId addBuffer(std::string Name, std::string Text);
  const std::string &name(BufferId B) const { return Buffers[B].Name; }
  const std::string &text(BufferId B) const { return Buffers[B].Text; }
  size_t size() const { return Buffers.size(); }
  LineColumn lineColumn(BufferId B, uint32_t Offset) const;
  /// The text of line \p Line (1-based) without its newline.
  std::string_view lineText(BufferId B, uint32_t Line) const;
  /// "file:line:col".
  std::string describe(SourceRange R) const;

private:
  struct Buffer {
    std::string Name, Text;
    std::vector<uint32_t> LineStarts;
  };
  std::vector<Buffer> Buffers;
};

} // namespace dd

#endif
