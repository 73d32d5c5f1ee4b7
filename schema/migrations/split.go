package migrations

import (
	"fmt"
	"io/fs"
	"sort"
	"strings"
)

// File is one migration: its version (the file name without .sql) and its statements in order.
type File struct {
	Version    string
	Statements []string
}

// Files returns every embedded migration in the order they apply, split into statements.
func Files() ([]File, error) {
	names, err := fs.Glob(FS, "*.sql")
	if err != nil {
		return nil, err
	}
	sort.Strings(names)
	out := make([]File, 0, len(names))
	for _, name := range names {
		b, err := fs.ReadFile(FS, name)
		if err != nil {
			return nil, err
		}
		stmts := Split(string(b))
		if len(stmts) == 0 {
			return nil, fmt.Errorf("migrations: %s holds no statement", name)
		}
		out = append(out, File{Version: strings.TrimSuffix(name, ".sql"), Statements: stmts})
	}
	return out, nil
}

// Split cuts SQL text into statements at the semicolons that end them, as PostgreSQL's own
// lexer does: a semicolon inside a string ('…', a doubled quote escaping a quote and, in E'…',
// a backslash escaping any character), a quoted identifier ("…"), a dollar-quoted body ($$…$$,
// $tag$…$tag$), a line comment (-- …) or a block comment (/* … */, nested) ends nothing.
// Statements are trimmed of surrounding white space and keep their comments; a piece holding
// only comments and white space is dropped. Text left unterminated (a quote or comment never
// closed) runs to the end of the input, where the server reports it.
func Split(sql string) []string {
	var out []string
	start, code := 0, false
	for i := 0; i < len(sql); {
		c := sql[i]
		switch {
		case c == ';':
			if code {
				out = append(out, strings.TrimSpace(sql[start:i]))
			}
			i++
			start, code = i, false
			continue
		case c == '-' && i+1 < len(sql) && sql[i+1] == '-':
			i = skipLineComment(sql, i)
			continue
		case c == '/' && i+1 < len(sql) && sql[i+1] == '*':
			i = skipBlockComment(sql, i)
			continue
		case c == '\'':
			i = skipString(sql, i, isEscapeString(sql, i))
		case c == '"':
			i = skipQuoted(sql, i, '"')
		case c == '$' && !(i > 0 && isIdentChar(sql[i-1])):
			if tag, ok := dollarTag(sql, i); ok {
				end := strings.Index(sql[i+len(tag):], tag)
				if end < 0 {
					i = len(sql)
				} else {
					i += len(tag) + end + len(tag)
				}
			} else {
				i++
			}
		case c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\v':
			i++
			continue
		default:
			i++
		}
		code = true
	}
	if code {
		out = append(out, strings.TrimSpace(sql[start:]))
	}
	return out
}

func skipLineComment(sql string, i int) int {
	if j := strings.IndexByte(sql[i:], '\n'); j >= 0 {
		return i + j + 1
	}
	return len(sql)
}

// skipBlockComment skips a /* … */ comment starting at i; PostgreSQL nests them.
func skipBlockComment(sql string, i int) int {
	depth := 0
	for i < len(sql) {
		switch {
		case sql[i] == '/' && i+1 < len(sql) && sql[i+1] == '*':
			depth++
			i += 2
		case sql[i] == '*' && i+1 < len(sql) && sql[i+1] == '/':
			depth--
			i += 2
			if depth == 0 {
				return i
			}
		default:
			i++
		}
	}
	return len(sql)
}

// skipString skips a '…' literal starting at i (” is a quote; with backslash escapes, \x is x).
func skipString(sql string, i int, backslash bool) int {
	for i++; i < len(sql); i++ {
		switch sql[i] {
		case '\\':
			if backslash {
				i++
			}
		case '\'':
			if i+1 < len(sql) && sql[i+1] == '\'' {
				i++
				continue
			}
			return i + 1
		}
	}
	return len(sql)
}

// skipQuoted skips a quoted identifier starting at i (a doubled quote is a quote).
func skipQuoted(sql string, i int, q byte) int {
	for i++; i < len(sql); i++ {
		if sql[i] == q {
			if i+1 < len(sql) && sql[i+1] == q {
				i++
				continue
			}
			return i + 1
		}
	}
	return len(sql)
}

// isEscapeString reports whether the quote at i opens an E'…' string: the E stands alone, not
// at the end of a longer word (PostgreSQL's "standard_conforming_strings" otherwise keeps
// backslashes literal).
func isEscapeString(sql string, i int) bool {
	if i == 0 || (sql[i-1] != 'E' && sql[i-1] != 'e') {
		return false
	}
	return i == 1 || !isIdentChar(sql[i-2])
}

// dollarTag returns the $tag$ opening a dollar-quoted body at i: a tag is empty or an
// identifier that does not start with a digit ($1 is a parameter).
func dollarTag(sql string, i int) (string, bool) {
	for j := i + 1; j < len(sql); j++ {
		c := sql[j]
		if c == '$' {
			return sql[i : j+1], true
		}
		if !isIdentChar(c) || (j == i+1 && c >= '0' && c <= '9') {
			return "", false
		}
	}
	return "", false
}

func isIdentChar(c byte) bool {
	return c == '_' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c >= 0x80
}
