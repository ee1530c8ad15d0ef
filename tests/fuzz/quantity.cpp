//===- quantity.cpp - libFuzzer target: numbers with units ----------------===//
//
// The one reader of numbers with units (support/Units.h: .dd literals,
// --set values, sweeps, the command line's options), and the VM's reading
// of a --set value. The first byte chooses whether a sign is allowed and the
// dimension parseQuantity is asked for; the rest is the text. A number read
// must be finite, and one that parseQuantity accepts is never negative.
//
//===----------------------------------------------------------------------===//

#include "support/Units.h"
#include "vm/VM.h"

#include <cmath>
#include <cstdlib>
#include <string>
#include <string_view>

using namespace dd;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *Data, size_t Size) {
  if (Size == 0)
    return 0;
  uint8_t Choice = Data[0];
  std::string_view Text(reinterpret_cast<const char *>(Data) + 1, Size - 1);
  std::string Why;
  bool AllowSign = Choice & 1;
  if (auto Q = readQuantity(Text, &Why, AllowSign)) {
    if (!std::isfinite(Q->Value))
      std::abort();
    (void)formatQuantity(Q->Value, Q->D);
    (void)dimName(Q->D);
  }
  (void)looksNumeric(Text);
  (void)lookupUnit(Text);
  static const Dim Dims[] = {Dim(), Dim::duration(), Dim::bytes(),
                             Dim::bandwidth()};
  Dim D = Dims[(Choice >> 1) % 4];
  if (auto V = parseQuantity(Text, D))
    if (!std::isfinite(*V) || *V < 0)
      std::abort();
  if (auto N = vm::settingNumber(Text))
    if (!std::isfinite(*N))
      std::abort();
  return 0;
}
