//===- MemberCases.h - Members.def's rows as case labels, by owner -*- C++
//-*-===//
//
// A switch over bc::MemberId that handles some owners' members is made
// exhaustive, without a default, by listing the others' rows as case labels
// generated from Members.def:
//
//   #define DD_MEMBER(Owner, Name, Result, Flags) PICK_##Owner(Owner##_##Name)
//   #include "bytecode/Members.def"
//
// expands to `case MemberId::Owner_Name:` for every row whose owner PICK
// picks, where PICK_Owner is DD_CASE_YES or DD_CASE_NO for every owner. A
// new row then fails to build until a switch handles it (-Wswitch); a new
// owner, until every PICK says whether it is one of its owners.
//
//===----------------------------------------------------------------------===//
#ifndef DD_VM_MEMBERCASES_H
#define DD_VM_MEMBERCASES_H

#define DD_CASE_YES(X) case bc::MemberId::X:
#define DD_CASE_NO(X)

// The owners whose members Interpreter::blockMember answers.
#define DD_BLOCK_OWNED_Task DD_CASE_NO
#define DD_BLOCK_OWNED_Set DD_CASE_NO
#define DD_BLOCK_OWNED_Layer DD_CASE_NO
#define DD_BLOCK_OWNED_ModelBlock DD_CASE_NO
#define DD_BLOCK_OWNED_Resource DD_CASE_NO
#define DD_BLOCK_OWNED_Device DD_CASE_NO
#define DD_BLOCK_OWNED_TraceInfo DD_CASE_NO
#define DD_BLOCK_OWNED_List DD_CASE_NO
#define DD_BLOCK_OWNED_String DD_CASE_NO
#define DD_BLOCK_OWNED_Block DD_CASE_YES
#define DD_BLOCK_OWNED_BlockSet DD_CASE_YES

// The owners other than Block (the last switch of blockMember answers
// Block's; BlockSet's are answered above it).
#define DD_NOT_BLOCK_Task DD_CASE_YES
#define DD_NOT_BLOCK_Set DD_CASE_YES
#define DD_NOT_BLOCK_Layer DD_CASE_YES
#define DD_NOT_BLOCK_ModelBlock DD_CASE_YES
#define DD_NOT_BLOCK_Resource DD_CASE_YES
#define DD_NOT_BLOCK_Device DD_CASE_YES
#define DD_NOT_BLOCK_TraceInfo DD_CASE_YES
#define DD_NOT_BLOCK_List DD_CASE_YES
#define DD_NOT_BLOCK_String DD_CASE_YES
#define DD_NOT_BLOCK_Block DD_CASE_NO
#define DD_NOT_BLOCK_BlockSet DD_CASE_YES

// The owners other than BlockSet (blockMember's switch of block sets).
#define DD_NOT_BLOCKSET_Task DD_CASE_YES
#define DD_NOT_BLOCKSET_Set DD_CASE_YES
#define DD_NOT_BLOCKSET_Layer DD_CASE_YES
#define DD_NOT_BLOCKSET_ModelBlock DD_CASE_YES
#define DD_NOT_BLOCKSET_Resource DD_CASE_YES
#define DD_NOT_BLOCKSET_Device DD_CASE_YES
#define DD_NOT_BLOCKSET_TraceInfo DD_CASE_YES
#define DD_NOT_BLOCKSET_List DD_CASE_YES
#define DD_NOT_BLOCKSET_String DD_CASE_YES
#define DD_NOT_BLOCKSET_Block DD_CASE_YES
#define DD_NOT_BLOCKSET_BlockSet DD_CASE_NO

#endif
