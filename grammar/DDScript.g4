// The .dd language: optimization models that transform a dependency graph.
// See docs/language.md. Only src/syntax/AstBuilder*.cpp sees the parser this
// grammar generates; everything else works on ddscript's own AST.
grammar DDScript;

@lexer::members {
  // A '/' starts a regex literal only where a value is expected after an
  // operator that takes one: after '~', '!~', '(', '[', ',', '=', ':' or
  // 'return'. Everywhere else it divides.
  size_t LastType = 0;
  void emit(std::unique_ptr<antlr4::Token> newToken) override {
    if (newToken->getChannel() == antlr4::Token::DEFAULT_CHANNEL)
      LastType = newToken->getType();
    antlr4::Lexer::emit(std::move(newToken));
  }
  bool regexAllowed() const {
    return LastType == MATCH || LastType == NOMATCH || LastType == LPAREN ||
           LastType == LBRACK || LastType == COMMA || LastType == ASSIGN ||
           LastType == COLON || LastType == RETURN;
  }
}

module : stmt* EOF ;

block : '{' stmt* '}' ;

stmt
  : 'param' IDENT '=' expr STRING? ';'?                       # paramStmt
  | 'import' (dottedName | STRING) ('as' IDENT)? ';'?         # importStmt
  | 'let' IDENT '=' expr ';'?                                 # letStmt
  | IDENT '=' expr ';'?                                       # assignStmt
  | ifStatement                                               # ifStmt
  | 'for' IDENT 'in' expr block                               # forStmt
  | 'break' ';'?                                              # breakStmt
  | 'continue' ';'?                                           # continueStmt
  | 'try' block                                               # tryStmt
  | 'fn' IDENT '(' paramList? ')' block                       # fnStmt
  | 'return' expr? ';'?                                       # returnStmt
  | verb=('shrink' | 'scale') expr how=('by' | 'to') expr ';'?  # scaleStmt
  | 'remove' expr ';'?                                        # removeStmt
  | 'resize' expr how=('by' | 'to') expr ';'?                 # resizeStmt
  | 'free' expr memClause+ ';'?                               # freeStmt
  | 'offload' expr memClause+ ';'?                            # offloadStmt
  | 'depend' expr 'on' expr ';'?                              # dependStmt
  | 'schedule' expr scheduleRule ';'?                         # scheduleStmt
  | 'print' expr (',' expr)* ';'?                             # printStmt
  | 'assert' expr (',' expr)? ';'?                            # assertStmt
  | expr ';'?                                                 # exprStmt
  ;

ifStatement : 'if' expr block ('else' (ifStatement | block))? ;

scheduleRule
  : 'by' expr                    // a priority: lower runs first
  | IDENT                        // fifo | program
  ;

dottedName : IDENT ('.' IDENT)* ;

paramList : param (',' param)* ;
param : IDENT ('=' expr)? ;

expr
  : lambdaParams '->' expr                                    # lambdaExpr
  | opExpr                                                    # operatorExpr
  ;

// Operators by precedence, tightest first (ANTLR gives earlier alternatives
// precedence); the order is Python's, with ".." between comparison and "|".
opExpr
  : opExpr '.' IDENT                                            # memberExpr
  | opExpr '(' argList? ')'                                     # callExpr
  | opExpr '[' expr ']'                                         # indexExpr
  | opExpr '[' lo=expr? ':' hi=expr? ']'                        # sliceExpr
  | '-' opExpr                                                  # negExpr
  | opExpr op=('*' | '/' | '%') opExpr                            # mulExpr
  | opExpr op=('+' | '-') opExpr                                  # addExpr
  | opExpr '&' opExpr                                             # intersectExpr
  | opExpr '|' opExpr                                             # unionExpr
  | opExpr '..' opExpr                                            # rangeExpr
  | opExpr op=('==' | '!=' | '<' | '<=' | '>' | '>=' | '~' | '!~' | 'in') opExpr # compareExpr
  | 'not' opExpr                                                # notExpr
  | opExpr 'and' opExpr                                           # andExpr
  | opExpr 'or' opExpr                                            # orExpr
  | 'select' IDENT (',' IDENT)* ('where' expr)?               # selectExpr
  | 'insert' IDENT STRING insertClause+                       # insertExpr
  | 'alloc' expr memClause+                                   # allocExpr
  | 'channel' STRING                                          # channelExpr
  | '(' expr ')'                                              # parenExpr
  | '[' (expr (',' expr)*)? ']'                               # listExpr
  | NUMBER                                                    # numberExpr
  | STRING                                                    # stringExpr
  | REGEX                                                     # regexExpr
  | ('true' | 'false')                                        # boolExpr
  | 'none'                                                    # noneExpr
  | IDENT                                                     # nameExpr
  ;

// on R | duration D | bytes B | after X | before Y (any order; 'on' first by
// convention). Clause names are checked by the AST builder.
insertClause : ('on' | IDENT) expr ;

// The clauses of free, offload and alloc: after T | before T | until T |
// through T | on R | bandwidth B; 'prefetch' makes the clauses after it
// describe an offload's copy back. Clause names are checked by the AST
// builder.
memClause : 'prefetch'? ('on' | IDENT) expr ;

lambdaParams
  : IDENT
  | '(' (IDENT (',' IDENT)*)? ')'
  ;

argList : arg (',' arg)* ;
arg : (IDENT ':')? expr ;

// --- Lexer ---

MATCH : '~' ;
NOMATCH : '!~' ;
LPAREN : '(' ;
LBRACK : '[' ;
COMMA : ',' ;
ASSIGN : '=' ;
COLON : ':' ;
RETURN : 'return' ;

NUMBER : DIGITS ('.' DIGITS)? ([eE] [+-]? DIGITS)? UNIT? ;
fragment DIGITS : [0-9] ('_'? [0-9])* ;
fragment UNIT : [a-zA-Z]+ ;

STRING : '"' (~["\\\r\n] | '\\' .)* '"' ;
// The predicate stands at the right edge: at the left edge it would stop
// ANTLR caching the lexer's start state, and every token would pay for
// a full ATN closure (about 20 us each).
REGEX : '/' (~[/\\\r\n] | '\\' .)+ '/' {regexAllowed()}? ;

IDENT : [a-zA-Z_] [a-zA-Z0-9_]* ;

LINE_COMMENT : ('#' | '//') ~[\r\n]* -> channel(HIDDEN) ;
WS : [ \t\r\n]+ -> channel(HIDDEN) ;

// Anything else is an error token, so the lexer never stops.
ERROR_CHAR : . ;
