//===- Value.cpp - Run-time values: freeing them --------------------------===//

#include "vm/Value.h"

using namespace dd;
using namespace dd::vm;

void Value::destroy(Obj *O) {
  // Values hold values: a list of a list of ... a million deep, or a chain
  // of a million closures each holding the one before, would recurse once
  // per level in the destructors and exhaust the stack. The first object
  // to die on a thread deletes it and, in a loop, every object that its
  // deletes free in turn; those wait here rather than being deleted inside
  // the destructor that freed them.
  thread_local std::vector<Obj *> Pending;
  thread_local bool Draining = false;
  Pending.push_back(O);
  if (Draining)
    return;
  Draining = true;
  while (!Pending.empty()) {
    Obj *Next = Pending.back();
    Pending.pop_back();
    delete Next;
  }
  Draining = false;
}
