#include "support/SourceManager.h"

#include <algorithm>

using namespace dd;

BufferId SourceManager::addBuffer(std::string Name, std::string Text) {
  Buffer B;
  B.Name = std::move(Name);
  B.Text = std::move(Text);
  B.LineStarts.push_back(0);
  for (uint32_t I = 0; I < B.Text.size(); ++I)
    if (B.Text[I] == '\n')
      B.LineStarts.push_back(I + 1);
  Buffers.push_back(std::move(B));
  return static_cast<BufferId>(Buffers.size() - 1);
}

LineColumn SourceManager::lineColumn(BufferId Id, uint32_t Offset) const {
  const Buffer &B = Buffers[Id];
  auto It = std::upper_bound(B.LineStarts.begin(), B.LineStarts.end(), Offset);
  uint32_t Line = static_cast<uint32_t>(It - B.LineStarts.begin());
  return {Line, Offset - B.LineStarts[Line - 1] + 1};
}

std::string_view SourceManager::lineText(BufferId Id, uint32_t Line) const {
  const Buffer &B = Buffers[Id];
  if (Line == 0 || Line > B.LineStarts.size())
    return {};
  uint32_t Begin = B.LineStarts[Line - 1];
  uint32_t End = Line < B.LineStarts.size()
                     ? B.LineStarts[Line] - 1
                     : static_cast<uint32_t>(B.Text.size());
  if (End > Begin && B.Text[End - 1] == '\r')
    --End;
  return std::string_view(B.Text).substr(Begin, End - Begin);
}

std::string SourceManager::describe(SourceRange R) const {
  if (!R.valid())
    return "<unknown>";
  LineColumn LC = lineColumn(R.Buffer, R.Begin);
  return name(R.Buffer) + ":" + std::to_string(LC.Line) + ":" +
         std::to_string(LC.Column);
}
