#include "frontend/lexer.h"

#include <gtest/gtest.h>

#include <cmath>
#include <memory>
#include <string>
#include <vector>

namespace tilec::frontend {
namespace {

SourceFilePtr source(const std::string& text) {
  auto file = std::make_shared<SourceFile>();
  file->name = "k.py";
  file->text = text;
  return file;
}

std::vector<Token> lex(const std::string& text) { return tokenize(source(text)); }

// The tokens as "NAME:x OP:= INT:1 NEWLINE END".
std::string kinds(const std::string& text) {
  std::string out;
  for (const Token& t : lex(text)) {
    if (!out.empty()) out += ' ';
    switch (t.kind) {
      case TokenKind::Name: out += "NAME:" + t.text; break;
      case TokenKind::Keyword: out += "KW:" + t.text; break;
      case TokenKind::Int: out += "INT:" + std::to_string(t.int_value); break;
      case TokenKind::Float: out += "FLOAT:" + t.text; break;
      case TokenKind::Imaginary: out += "IMAG:" + t.text; break;
      case TokenKind::String: out += "STR:" + t.text; break;
      case TokenKind::Op: out += "OP:" + t.text; break;
      case TokenKind::Newline: out += "NEWLINE"; break;
      case TokenKind::Indent: out += "INDENT"; break;
      case TokenKind::Dedent: out += "DEDENT"; break;
      case TokenKind::End: out += "END"; break;
    }
  }
  return out;
}

// Each token's line:col, for checking locations.
std::string locations(const std::string& text) {
  std::string out;
  for (const Token& t : lex(text)) {
    if (!out.empty()) out += ' ';
    out += std::to_string(t.loc.line) + ":" + std::to_string(t.loc.col);
  }
  return out;
}

std::string lex_error(const std::string& text) {
  try {
    lex(text);
  } catch (const CompileError& e) {
    return e.what();
  }
  return "<no error>";
}

const Token& only_token(const std::vector<Token>& tokens) {
  EXPECT_EQ(tokens.size(), 3u);  // the token, NEWLINE, END
  return tokens.at(0);
}

TEST(Lexer, SimpleStatement) {
  EXPECT_EQ(kinds("x = y + 1\n"), "NAME:x OP:= NAME:y OP:+ INT:1 NEWLINE END");
  EXPECT_EQ(locations("x = y + 1\n"), "1:1 1:3 1:5 1:7 1:9 1:10 1:10");
}

TEST(Lexer, EmptyAndBlankText) {
  EXPECT_EQ(kinds(""), "END");
  EXPECT_EQ(kinds("\n\n   \n# only a comment\n"), "END");
}

TEST(Lexer, NoTrailingNewline) {
  EXPECT_EQ(kinds("if a:\n    b"), "KW:if NAME:a OP:: NEWLINE INDENT NAME:b NEWLINE DEDENT END");
  // NEWLINE, DEDENT and END sit just after the last token.
  EXPECT_EQ(locations("if a:\n    b"), "1:1 1:4 1:5 1:6 2:5 2:5 2:6 2:6 2:6");
}

TEST(Lexer, IndentAndDedent) {
  std::string text =
      "def f(a):\n"
      "    if a:\n"
      "        return 1\n"
      "    return 2\n"
      "x = 3\n";
  EXPECT_EQ(kinds(text),
            "KW:def NAME:f OP:( NAME:a OP:) OP:: NEWLINE "
            "INDENT KW:if NAME:a OP:: NEWLINE "
            "INDENT KW:return INT:1 NEWLINE "
            "DEDENT KW:return INT:2 NEWLINE "
            "DEDENT NAME:x OP:= INT:3 NEWLINE END");
}

TEST(Lexer, SeveralDedentsAtOnceAndAtEnd) {
  std::string text =
      "for i in a:\n"
      "  for j in b:\n"
      "    x\n"
      "y\n"
      "for k in c:\n"
      "  for l in d:\n"
      "    z\n";
  EXPECT_EQ(kinds(text),
            "KW:for NAME:i KW:in NAME:a OP:: NEWLINE INDENT "
            "KW:for NAME:j KW:in NAME:b OP:: NEWLINE INDENT NAME:x NEWLINE DEDENT DEDENT "
            "NAME:y NEWLINE "
            "KW:for NAME:k KW:in NAME:c OP:: NEWLINE INDENT "
            "KW:for NAME:l KW:in NAME:d OP:: NEWLINE INDENT NAME:z NEWLINE DEDENT DEDENT END");
}

TEST(Lexer, BracketsJoinLines) {
  std::string text =
      "f(a,\n"
      "      b,\n"
      "# a comment inside\n"
      "\n"
      "  [c,\n"
      "{d}])\n"
      "g\n";
  EXPECT_EQ(kinds(text),
            "NAME:f OP:( NAME:a OP:, NAME:b OP:, OP:[ NAME:c OP:, OP:{ NAME:d OP:} OP:] OP:) "
            "NEWLINE NAME:g NEWLINE END");
}

TEST(Lexer, BracketsInsideIndentedBlock) {
  std::string text =
      "if x:\n"
      "    y = f(1,\n"
      "2)\n"
      "    z = 3\n";
  EXPECT_EQ(kinds(text),
            "KW:if NAME:x OP:: NEWLINE INDENT NAME:y OP:= NAME:f OP:( INT:1 OP:, INT:2 OP:) "
            "NEWLINE NAME:z OP:= INT:3 NEWLINE DEDENT END");
}

TEST(Lexer, CommentsAndBlankLinesDoNotIndent) {
  std::string text =
      "if x:  # trailing comment\n"
      "\n"
      "        # comment deeper than the block\n"
      "# comment at column 1\n"
      "    y\n"
      "   \n"
      "    z\n";
  EXPECT_EQ(kinds(text),
            "KW:if NAME:x OP:: NEWLINE INDENT NAME:y NEWLINE NAME:z NEWLINE DEDENT END");
  // The NEWLINE of line 1 is right after the ':', before the comment.
  EXPECT_EQ(lex(text)[3].loc.line, 1);
  EXPECT_EQ(lex(text)[3].loc.col, 6);
}

TEST(Lexer, BackslashContinuation) {
  std::string text =
      "x = 1 + \\\n"
      "2\n"
      "if a and \\\n"
      "        b:\n"
      "    pass\n";
  EXPECT_EQ(kinds(text),
            "NAME:x OP:= INT:1 OP:+ INT:2 NEWLINE KW:if NAME:a KW:and NAME:b OP:: NEWLINE "
            "INDENT KW:pass NEWLINE DEDENT END");
  EXPECT_EQ(lex(text)[4].loc.line, 2);
}

TEST(Lexer, BaseIndentationOfCutOutText) {
  std::string text =
      "\n"
      "    # leading comment, less or more indented lines are fine\n"
      "    @T.prim_func\n"
      "    def k():\n"
      "        x = (1,\n"
      "  2)\n"
      "    y\n";
  EXPECT_EQ(kinds(text),
            "OP:@ NAME:T OP:. NAME:prim_func NEWLINE KW:def NAME:k OP:( OP:) OP:: NEWLINE "
            "INDENT NAME:x OP:= OP:( INT:1 OP:, INT:2 OP:) NEWLINE DEDENT NAME:y NEWLINE END");
  std::vector<Token> tokens = lex(text);
  EXPECT_EQ(tokens[0].loc.line, 3);
  EXPECT_EQ(tokens[0].loc.col, 5);  // columns are those of the text
  EXPECT_EQ(tokens[12].text, "x");
  EXPECT_EQ(tokens[12].loc.col, 9);
}

TEST(Lexer, BaseIndentationEndsWithoutDedent) {
  EXPECT_EQ(kinds("  if a:\n    b\n"),
            "KW:if NAME:a OP:: NEWLINE INDENT NAME:b NEWLINE DEDENT END");
}

TEST(Lexer, LineIndentedLessThanBase) {
  EXPECT_EQ(lex_error("    x = 1\n  y = 2\n"),
            "k.py:2:3: error: line is indented less than the first line of the code\n"
            "      y = 2\n"
            "      ^");
}

TEST(Lexer, InconsistentDedent) {
  EXPECT_EQ(lex_error("if x:\n    y\n  z\n"),
            "k.py:3:3: error: unindent does not match any outer indentation level\n"
            "      z\n"
            "      ^");
}

TEST(Lexer, TabIndentation) {
  std::string text = "if x:\n\tif y:\n\t\tz\n\tw\n";
  EXPECT_EQ(kinds(text),
            "KW:if NAME:x OP:: NEWLINE INDENT KW:if NAME:y OP:: NEWLINE INDENT NAME:z NEWLINE "
            "DEDENT NAME:w NEWLINE DEDENT END");
  // Columns count bytes: the caret printer keeps the tabs.
  EXPECT_EQ(lex(text)[10].loc.col, 3);
  EXPECT_EQ(lex_error("if x:\n\t\t'a\n"),
            "k.py:2:3: error: unterminated string literal\n"
            "    \t\t'a\n"
            "    \t\t^");
}

TEST(Lexer, TabsAndSpacesMustAgree) {
  // A tab is column 8 as are eight spaces, but not with tabs counted as one column.
  EXPECT_EQ(lex_error("if x:\n\ty\n        z\n"),
            "k.py:3:9: error: inconsistent use of tabs and spaces in indentation\n"
            "            z\n"
            "            ^");
}

TEST(Lexer, CarriageReturnLineEndings) {
  const char* expected =
      "KW:if NAME:x OP:: NEWLINE INDENT NAME:y OP:= STR:'a' NEWLINE DEDENT NAME:z NEWLINE END";
  EXPECT_EQ(kinds("if x:\r\n    y = 'a'\r\n\r\nz\r\n"), expected);
  // A lone CR ends a line, as in Python: a file of old Mac line ends read as one
  // line, here all of it a comment.
  EXPECT_EQ(kinds("# c\rif x:\r    y = 'a'\r\rz\r"), expected);
  EXPECT_EQ(kinds("x = 1 + \\\r    2\r"), "NAME:x OP:= INT:1 OP:+ INT:2 NEWLINE END");
  EXPECT_EQ(only_token(lex("'''a\rb'''")).str_value, "a\nb");
  EXPECT_EQ(lex("x\ry\r\nz")[4].loc.line, 3);  // x NEWLINE y NEWLINE z
  EXPECT_EQ(lex_error("x = 1\ry = $\r"),
            "k.py:2:5: error: invalid character '$'\n"
            "    y = $\n"
            "        ^");
}

TEST(Lexer, KeywordsAndNames) {
  EXPECT_EQ(kinds("if not x is None and True or False: pass"),
            "KW:if KW:not NAME:x KW:is KW:None KW:and KW:True KW:or KW:False OP:: KW:pass "
            "NEWLINE END");
  // Soft keywords and names that contain keywords are names.
  EXPECT_EQ(kinds("match case type _ iffy _if None_ é"),
            "NAME:match NAME:case NAME:type NAME:_ NAME:iffy NAME:_if NAME:None_ NAME:é NEWLINE "
            "END");
}

TEST(Lexer, Operators) {
  EXPECT_EQ(kinds("a**=b//=c>>=d<<=e...f**g//h>>i<<j<=k>=l==m!=n->o:=p"),
            "NAME:a OP:**= NAME:b OP://= NAME:c OP:>>= NAME:d OP:<<= NAME:e OP:... NAME:f OP:** "
            "NAME:g OP:// NAME:h OP:>> NAME:i OP:<< NAME:j OP:<= NAME:k OP:>= NAME:l OP:== "
            "NAME:m OP:!= NAME:n OP:-> NAME:o OP::= NAME:p NEWLINE END");
  EXPECT_EQ(kinds("+= -= *= /= %= &= |= ^= @="),
            "OP:+= OP:-= OP:*= OP:/= OP:%= OP:&= OP:|= OP:^= OP:@= NEWLINE END");
  EXPECT_EQ(kinds("+ - * / % @ & | ^ ~ < > ( ) [ ] { } , : . ; ="),
            "OP:+ OP:- OP:* OP:/ OP:% OP:@ OP:& OP:| OP:^ OP:~ OP:< OP:> OP:( OP:) OP:[ OP:] "
            "OP:{ OP:} OP:, OP:: OP:. OP:; OP:= NEWLINE END");
  EXPECT_EQ(kinds("x.y...z"), "NAME:x OP:. NAME:y OP:... NAME:z NEWLINE END");
}

TEST(Lexer, Integers) {
  EXPECT_EQ(only_token(lex("0")).int_value, 0);
  EXPECT_EQ(only_token(lex("00")).int_value, 0);
  EXPECT_EQ(only_token(lex("1_000_000")).int_value, 1000000);
  EXPECT_EQ(only_token(lex("0x_FF")).int_value, 255);
  EXPECT_EQ(only_token(lex("0XdeadBEEF")).int_value, 0xdeadbeef);
  EXPECT_EQ(only_token(lex("0o17")).int_value, 15);
  EXPECT_EQ(only_token(lex("0b1010_1010")).int_value, 170);
  EXPECT_EQ(only_token(lex("9223372036854775807")).int_value, INT64_MAX);
  EXPECT_EQ(only_token(lex("0x7fffffffffffffff")).int_value, INT64_MAX);
  EXPECT_EQ(only_token(lex("0x7fffffffffffffff")).kind, TokenKind::Int);
  EXPECT_EQ(only_token(lex("0x7fffffffffffffff")).text, "0x7fffffffffffffff");
}

TEST(Lexer, Floats) {
  EXPECT_EQ(only_token(lex("1.0")).float_value, 1.0);
  EXPECT_EQ(only_token(lex("1e-6")).float_value, 1e-6);
  EXPECT_EQ(only_token(lex(".5")).float_value, 0.5);
  EXPECT_EQ(only_token(lex("5.")).float_value, 5.0);
  EXPECT_EQ(only_token(lex("1_000.0")).float_value, 1000.0);
  EXPECT_EQ(only_token(lex("1_0.2_5e1_0")).float_value, 10.25e10);
  EXPECT_EQ(only_token(lex("2E+3")).float_value, 2000.0);
  EXPECT_EQ(only_token(lex("1e400")).float_value, HUGE_VAL);
  EXPECT_EQ(only_token(lex("1e-400")).float_value, 0.0);
  EXPECT_EQ(only_token(lex("5.")).kind, TokenKind::Float);
  EXPECT_EQ(only_token(lex("1e5")).kind, TokenKind::Float);
  EXPECT_EQ(only_token(lex("2.5j")).kind, TokenKind::Imaginary);
  EXPECT_EQ(only_token(lex("2.5j")).float_value, 2.5);
  EXPECT_EQ(kinds("1.e5 x.y 1..real 0j"),
            "FLOAT:1.e5 NAME:x OP:. NAME:y FLOAT:1. OP:. NAME:real IMAG:0j NEWLINE END");
}

TEST(Lexer, NumberErrors) {
  EXPECT_EQ(lex_error("x = 9223372036854775808\n"),
            "k.py:1:5: error: integer literal too large\n"
            "    x = 9223372036854775808\n"
            "        ^");
  EXPECT_EQ(lex_error("0x8000000000000000"),
            "k.py:1:1: error: integer literal too large\n"
            "    0x8000000000000000\n"
            "    ^");
  EXPECT_EQ(lex_error("x = 1_"),
            "k.py:1:5: error: invalid decimal literal\n"
            "    x = 1_\n"
            "        ^");
  EXPECT_EQ(lex_error("1__0"), "k.py:1:1: error: invalid decimal literal\n    1__0\n    ^");
  EXPECT_EQ(lex_error("12abc"), "k.py:1:1: error: invalid decimal literal\n    12abc\n    ^");
  EXPECT_EQ(lex_error("1e"), "k.py:1:1: error: invalid decimal literal\n    1e\n    ^");
  EXPECT_EQ(lex_error("1_.5"), "k.py:1:1: error: invalid decimal literal\n    1_.5\n    ^");
  EXPECT_EQ(lex_error("0x"), "k.py:1:1: error: invalid hexadecimal literal\n    0x\n    ^");
  EXPECT_EQ(lex_error("0o8"),
            "k.py:1:3: error: invalid digit '8' in octal literal\n    0o8\n      ^");
  EXPECT_EQ(lex_error("0b102"),
            "k.py:1:5: error: invalid digit '2' in binary literal\n    0b102\n        ^");
  EXPECT_EQ(lex_error("0xfg"), "k.py:1:1: error: invalid hexadecimal literal\n    0xfg\n    ^");
  EXPECT_EQ(lex_error("0o1_"), "k.py:1:1: error: invalid octal literal\n    0o1_\n    ^");
  EXPECT_EQ(lex_error("0b"), "k.py:1:1: error: invalid binary literal\n    0b\n    ^");
  EXPECT_EQ(lex_error("0123"),
            "k.py:1:1: error: leading zeros in decimal integer literals are not permitted; use "
            "an 0o prefix for octal integers\n"
            "    0123\n"
            "    ^");
  // Leading zeros are fine in floats and imaginary numbers.
  EXPECT_EQ(only_token(lex("0123.5")).float_value, 123.5);
  EXPECT_EQ(only_token(lex("0123j")).kind, TokenKind::Imaginary);
}

TEST(Lexer, StringsDecode) {
  EXPECT_EQ(only_token(lex("'a\\nb\\t\\\\\\'\\\"'")).str_value, "a\nb\t\\'\"");
  EXPECT_EQ(only_token(lex("\"it's\"")).str_value, "it's");
  EXPECT_EQ(only_token(lex("'\\x41\\101\\0'")).str_value, std::string("AA\0", 3));
  EXPECT_EQ(only_token(lex("'\\xe9\\u00e9\\U0001F600'")).str_value,
            "\xC3\xA9\xC3\xA9\xF0\x9F\x98\x80");
  EXPECT_EQ(only_token(lex("'\\a\\b\\f\\r\\v'")).str_value, "\a\b\f\r\v");
  EXPECT_EQ(only_token(lex("'\\d\\q'")).str_value, "\\d\\q");  // unknown escapes stay
  EXPECT_EQ(only_token(lex("'a\\\nb'")).str_value, "ab");      // escaped newline
  EXPECT_EQ(only_token(lex("r'a\\nb\\''")).str_value, "a\\nb\\'");
  EXPECT_EQ(only_token(lex("R\"\\d+\"")).str_value, "\\d+");
  EXPECT_EQ(only_token(lex("u'x'")).str_value, "x");
  EXPECT_EQ(only_token(lex("'''a\n'b'\n\"\"c'''")).str_value, "a\n'b'\n\"\"c");
  EXPECT_EQ(only_token(lex("\"\"\"x\\ty\"\"\"")).str_value, "x\ty");
  EXPECT_EQ(only_token(lex("''")).str_value, "");
  EXPECT_EQ(only_token(lex("'é'")).str_value, "é");
  EXPECT_FALSE(only_token(lex("'a'")).named_escape);
}

TEST(Lexer, NamedUnicodeEscapesAreFlagged) {
  // There is no Unicode name table: the escape is left out and the token flagged.
  std::vector<Token> tokens = lex("'a\\N{EM DASH}b'");
  const Token& t = only_token(tokens);
  EXPECT_TRUE(t.named_escape);
  EXPECT_EQ(t.str_value, "ab");
  EXPECT_FALSE(only_token(lex("r'\\N{EM DASH}'")).named_escape);
  EXPECT_FALSE(only_token(lex("b'\\N{EM DASH}'")).named_escape);
}

TEST(Lexer, StringTokensAndLocations) {
  std::string text = "x = '''one\ntwo''' + b'y'\nz\n";
  EXPECT_EQ(kinds(text), "NAME:x OP:= STR:'''one\ntwo''' OP:+ STR:b'y' NEWLINE NAME:z NEWLINE END");
  std::vector<Token> tokens = lex(text);
  EXPECT_EQ(tokens[3].loc.line, 2);  // the '+' after the multi-line string
  EXPECT_EQ(tokens[3].loc.col, 8);
  EXPECT_EQ(tokens[4].flavor, StringFlavor::Bytes);
  EXPECT_EQ(tokens[6].loc.line, 3);
}

TEST(Lexer, StringFlavorsAndPrefixes) {
  EXPECT_EQ(only_token(lex("b'\\x00'")).flavor, StringFlavor::Bytes);
  EXPECT_EQ(only_token(lex("Rb'x'")).flavor, StringFlavor::Bytes);
  EXPECT_EQ(only_token(lex("bR'x'")).flavor, StringFlavor::Bytes);
  EXPECT_EQ(only_token(lex("f'{x}'")).flavor, StringFlavor::Format);
  EXPECT_EQ(only_token(lex("rF'{x}'")).flavor, StringFlavor::Format);
  EXPECT_EQ(only_token(lex("'x'")).flavor, StringFlavor::Plain);
  // Not prefixes: a name then a string.
  EXPECT_EQ(kinds("ub'x' x'y'"), "NAME:ub STR:'x' NAME:x STR:'y' NEWLINE END");
}

TEST(Lexer, FormatStrings) {
  // Braces, nested literals with any quotes (Python 3.12), format specs with quotes.
  EXPECT_EQ(kinds("f'{a[\"k\"]!r:>{w}} {{}} {b:'^10}' x"),
            "STR:f'{a[\"k\"]!r:>{w}} {{}} {b:'^10}' NAME:x NEWLINE END");
  EXPECT_EQ(kinds("f'{x['k']}' y"), "STR:f'{x['k']}' NAME:y NEWLINE END");
  EXPECT_EQ(kinds("f'{ {\"a\": 1}[\"a\"] }' y"), "STR:f'{ {\"a\": 1}[\"a\"] }' NAME:y NEWLINE END");
  EXPECT_EQ(kinds("f\"{f'{x}'}\" y"), "STR:f\"{f'{x}'}\" NAME:y NEWLINE END");
  EXPECT_EQ(kinds("f'''{\nx\n}''' y"), "STR:f'''{\nx\n}''' NAME:y NEWLINE END");
  // A backslash does not escape a brace: `\{{` is a backslash and an escaped brace.
  EXPECT_EQ(kinds("rf'(\\{{%)({x})' y"), "STR:rf'(\\{{%)({x})' NAME:y NEWLINE END");
  EXPECT_EQ(kinds("f'\\{x}' y"), "STR:f'\\{x}' NAME:y NEWLINE END");
}

TEST(Lexer, StringErrors) {
  EXPECT_EQ(lex_error("x = 'abc\ny = 1\n"),
            "k.py:1:5: error: unterminated string literal\n"
            "    x = 'abc\n"
            "        ^");
  EXPECT_EQ(lex_error("x = rb\"abc"),
            "k.py:1:5: error: unterminated string literal\n"
            "    x = rb\"abc\n"
            "        ^");
  EXPECT_EQ(lex_error("x = 'abc\\'"),
            "k.py:1:5: error: unterminated string literal\n"
            "    x = 'abc\\'\n"
            "        ^");
  EXPECT_EQ(lex_error("s = \"\"\"doc\n\nmore\n"),
            "k.py:1:5: error: unterminated triple-quoted string literal\n"
            "    s = \"\"\"doc\n"
            "        ^");
  // Inside a replacement field a quote opens a nested literal (Python 3.12).
  EXPECT_EQ(lex_error("f'{x'"),
            "k.py:1:5: error: unterminated string literal\n"
            "    f'{x'\n"
            "        ^");
  EXPECT_EQ(lex_error("s = 'a\\x4'"),
            "k.py:1:7: error: truncated \\xXX escape\n"
            "    s = 'a\\x4'\n"
            "          ^");
  EXPECT_EQ(lex_error("'\\u12'"), "k.py:1:2: error: truncated \\uXXXX escape\n    '\\u12'\n     ^");
  EXPECT_EQ(lex_error("'\\U0000001'"),
            "k.py:1:2: error: truncated \\UXXXXXXXX escape\n    '\\U0000001'\n     ^");
  EXPECT_EQ(lex_error("'\\U00110000'"),
            "k.py:1:2: error: illegal Unicode character in \\U escape\n    '\\U00110000'\n     ^");
  EXPECT_EQ(lex_error("'\\N{DASH'"),
            "k.py:1:2: error: malformed \\N character escape\n    '\\N{DASH'\n     ^");
  EXPECT_EQ(lex_error("'\\N'"),
            "k.py:1:2: error: malformed \\N character escape\n    '\\N'\n     ^");
}

TEST(Lexer, BracketErrors) {
  EXPECT_EQ(lex_error("x = f(a))\n"),
            "k.py:1:9: error: unmatched ')'\n"
            "    x = f(a))\n"
            "            ^");
  EXPECT_EQ(lex_error("x = [a, (b]\n"),
            "k.py:1:11: error: closing parenthesis ']' does not match opening parenthesis '('\n"
            "    x = [a, (b]\n"
            "              ^");
  EXPECT_EQ(lex_error("x = f(a,\n  [b\n\ny = 2\n"),
            "k.py:2:3: error: '[' was never closed\n"
            "      [b\n"
            "      ^");
  EXPECT_EQ(lex_error("}"), "k.py:1:1: error: unmatched '}'\n    }\n    ^");
}

TEST(Lexer, CharacterErrors) {
  EXPECT_EQ(lex_error("x = a $ b"),
            "k.py:1:7: error: invalid character '$'\n    x = a $ b\n          ^");
  EXPECT_EQ(lex_error("a ? b"), "k.py:1:3: error: invalid character '?'\n    a ? b\n      ^");
  EXPECT_EQ(lex_error("a ! b"), "k.py:1:3: error: invalid character '!'\n    a ! b\n      ^");
  // The character shows escaped, and the caret sits under the escape.
  EXPECT_EQ(lex_error(std::string("a \x01 b")),
            "k.py:1:3: error: invalid non-printable character U+0001\n    a \\x01 b\n      ^");
}

TEST(Lexer, NulBytesAreAnErrorWithTheWholeMessage) {
  // As in Python. The message, the line and the caret all come before any NUL
  // a C-string reader would stop at (it cut the message off before the caret).
  std::string text("x = 1\ny = 'a\0b'  # c\0\n", 22);
  std::string error = lex_error(text);
  EXPECT_EQ(error,
            "k.py:2:7: error: source code cannot contain null bytes\n"
            "    y = 'a\\x00b'  # c\\x00\n"
            "          ^");
  EXPECT_EQ(error.find('\0'), std::string::npos);
}

TEST(Lexer, ContinuationErrors) {
  EXPECT_EQ(lex_error("x = 1 + \\ 2\n"),
            "k.py:1:9: error: unexpected character after line continuation character\n"
            "    x = 1 + \\ 2\n"
            "            ^");
  EXPECT_EQ(lex_error("x = 1 + \\"),
            "k.py:1:9: error: unexpected end of file after line continuation character\n"
            "    x = 1 + \\\n"
            "            ^");
}

TEST(Lexer, ErrorLinesCountFromFirstLine) {
  auto file = std::make_shared<SourceFile>();
  file->name = "model.py";
  file->text = "    def f():\n        return 'x\n";
  file->first_line = 40;
  try {
    tokenize(file);
    FAIL() << "no error";
  } catch (const CompileError& e) {
    EXPECT_EQ(std::string(e.what()),
              "model.py:41:16: error: unterminated string literal\n"
              "            return 'x\n"
              "                   ^");
  }
}

}  // namespace
}  // namespace tilec::frontend
