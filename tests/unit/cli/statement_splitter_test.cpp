#include <doctest/doctest.h>

#include "cli/statement_splitter.h"

using argus::cli::SplitInput;
using argus::cli::splitStatements;
using Strings = std::vector<std::string>;

TEST_CASE("statements end at ; and several on a line run in order") {
  SplitInput s = splitStatements("SELECT 1; SELECT 2 ;SELECT 3;\n");
  CHECK(s.statements == Strings{"SELECT 1", "SELECT 2", "SELECT 3"});
  CHECK(s.rest.empty());
}

TEST_CASE("a statement without its ; is the rest, across lines") {
  SplitInput s = splitStatements("SELECT 1; SELECT\n  step\n");
  CHECK(s.statements == Strings{"SELECT 1"});
  CHECK(s.rest == " SELECT\n  step\n");
  SplitInput done = splitStatements(s.rest + "FROM steps;\n");
  CHECK(done.statements == Strings{"SELECT\n  step\nFROM steps"});
  CHECK(done.rest.empty());
}

TEST_CASE("; inside literals, quoted identifiers and comments does not end a statement") {
  CHECK(splitStatements("SELECT 'a;b', 'it''s;' AS \"x;\"\"y\";").statements == Strings{"SELECT 'a;b', 'it''s;' AS \"x;\"\"y\""});
  CHECK(splitStatements("SELECT 1 -- no; end here\n, 2;").statements == Strings{"SELECT 1 -- no; end here\n, 2"});
  CHECK(splitStatements("SELECT /* ; */ 1;").statements == Strings{"SELECT /* ; */ 1"});
  CHECK(splitStatements("SELECT 1 -- /* not a comment start\n;").statements == Strings{"SELECT 1 -- /* not a comment start"});
}

TEST_CASE("unfinished literals and comments keep the input open") {
  SplitInput lit = splitStatements("SELECT 'a;\n");
  CHECK(lit.statements.empty());
  CHECK(lit.rest == "SELECT 'a;\n");
  CHECK(splitStatements(lit.rest + "b';").statements == Strings{"SELECT 'a;\nb'"});
  SplitInput doubled = splitStatements("SELECT 'it''");  // '' then an unfinished literal
  CHECK(doubled.statements.empty());
  CHECK(doubled.rest == "SELECT 'it''");
  SplitInput comment = splitStatements("/* a;\n");
  CHECK(comment.statements.empty());
  CHECK(comment.rest == "/* a;\n");
}

TEST_CASE("empty statements and comments alone are dropped") {
  SplitInput s = splitStatements(";; -- just a comment\n  /* and another */ ;\n  ");
  CHECK(s.statements.empty());
  CHECK(s.rest.empty());
  CHECK(splitStatements("SELECT 1; -- done\n").rest.empty());
  CHECK(splitStatements("").statements.empty());
}
