package vllmrace.catalogue.drift;

import java.util.ArrayList;
import java.util.List;

/**
 * Splits Python source into logical lines, the unit Python's own indentation rules work on: a statement that spans
 * physical lines through open brackets, backslash continuations or multi-line strings is one logical line, and blank
 * or comment-only lines are none. Only what the function finder needs is kept: where each logical line starts and
 * ends, its indentation, and its code with comments removed and string literals reduced to their quotes (so a
 * {@code def} inside a docstring, or a '#' or ':' inside a string, is never mistaken for code).
 *
 * <p>Not handled: Python 3.12 f-strings that nest the same quote ({@code f"{d["k"]}"}); vLLM still supports 3.10.
 */
final class LogicalLines {

    /** A logical line: 0-based first and last physical line, indentation in columns, code outside strings. */
    record Line(int first, int last, int indent, String code) {}

    private LogicalLines() {}

    static List<Line> of(List<String> physical) {
        List<Line> lines = new ArrayList<>();
        StringBuilder code = new StringBuilder();
        String quote = null; // delimiter of the string literal still open: ', ", ''' or """
        int depth = 0; // open brackets
        int first = -1; // first physical line of the logical line being read; -1 between logical lines
        int indent = 0;
        for (int i = 0; i < physical.size(); i++) {
            String line = physical.get(i);
            if (first < 0) {
                String stripped = line.strip();
                if (stripped.isEmpty() || stripped.startsWith("#")) {
                    continue; // Python ignores these for indentation, whatever their column
                }
                first = i;
                indent = indentOf(line);
                code.setLength(0);
            }
            boolean continued = false; // backslash at the end, outside a string
            boolean escapedEnd = false; // backslash at the end, inside a string
            int n = line.length();
            int p = 0;
            while (p < n) {
                char c = line.charAt(p);
                if (quote != null) {
                    if (c == '\\') {
                        escapedEnd = p == n - 1;
                        p += 2; // an escaped character never closes the string, raw strings included
                    } else if (line.startsWith(quote, p)) {
                        code.append(c).append(c);
                        p += quote.length();
                        quote = null;
                    } else {
                        p++;
                    }
                } else if (c == '#') {
                    break;
                } else if (c == '\'' || c == '"') {
                    String triple = String.valueOf(c).repeat(3);
                    quote = line.startsWith(triple, p) ? triple : String.valueOf(c);
                    p += quote.length();
                } else if (c == '\\' && p == n - 1) {
                    continued = true;
                    p++;
                } else {
                    if (c == '(' || c == '[' || c == '{') {
                        depth++;
                    } else if ((c == ')' || c == ']' || c == '}') && depth > 0) {
                        depth--;
                    }
                    code.append(c);
                    p++;
                }
            }
            if (quote != null && quote.length() == 1 && !escapedEnd) {
                quote = null; // an unterminated one-line string: a syntax error; recover at the end of the line
            }
            if (quote == null && depth == 0 && !continued) {
                lines.add(new Line(first, i, indent, code.toString().strip()));
                first = -1;
            } else {
                code.append(' ');
            }
        }
        if (first >= 0) { // an unclosed bracket or string runs to the end of the file
            lines.add(new Line(first, physical.size() - 1, indent, code.toString().strip()));
        }
        return lines;
    }

    /** Indentation in columns, as Python counts it: a tab advances to the next multiple of 8. */
    static int indentOf(String line) {
        int column = 0;
        for (int i = 0; i < line.length(); i++) {
            char c = line.charAt(i);
            if (c == ' ') {
                column++;
            } else if (c == '\t') {
                column = (column / 8 + 1) * 8;
            } else if (c == '\f') {
                column = 0;
            } else {
                break;
            }
        }
        return column;
    }
}
