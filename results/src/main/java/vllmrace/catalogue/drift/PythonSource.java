package vllmrace.catalogue.drift;

import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Deque;
import java.util.List;
import java.util.Optional;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * Finds Python functions by parsing, not by line numbers, so a pin survives code inserted above the function. The
 * parser follows Python's indentation rules over {@link LogicalLines}: a {@code def} or {@code class} body runs until
 * the first logical line indented no deeper than its header. Each function's scope is the chain of enclosing
 * {@code class} and {@code def} statements; {@code if}/{@code try}/{@code with} blocks are transparent, as they are
 * in Python ({@code if TYPE_CHECKING:} branches define members of the enclosing class).
 */
public final class PythonSource {
    private static final String NAME = "[\\p{L}_][\\p{L}\\p{N}_]*";
    private static final Pattern HEADER =
            Pattern.compile("(?:async\\s+)?(def)\\s+(" + NAME + ")|class\\s+(" + NAME + ")");
    private static final Pattern QUALNAME = Pattern.compile(NAME + "(?:\\." + NAME + ")*");

    private PythonSource() {}

    /**
     * The function with this dotted qualname ({@code f}, {@code Scheduler.update_from_output},
     * {@code Outer.Inner.f}, {@code Class.outer_fn.inner_fn}), matched only as a direct member of the named scope.
     * When the name is defined several times in that scope the last definition wins, as it does when Python runs.
     */
    public static Optional<PyFunction> find(String source, String qualname) {
        if (qualname == null || !QUALNAME.matcher(qualname).matches()) {
            throw new IllegalArgumentException("not a dotted Python name: " + qualname);
        }
        PyFunction found = null;
        for (PyFunction f : functions(source)) {
            if (f.qualname().equals(qualname)) {
                found = f;
            }
        }
        return Optional.ofNullable(found);
    }

    /** Every function in the source (methods and nested defs included), in source order. */
    public static List<PyFunction> functions(String source) {
        List<String> physical = List.of(source.split("\r\n|\r|\n", -1));
        List<Scope> scopes = new ArrayList<>();
        Deque<Scope> open = new ArrayDeque<>(); // innermost first
        int decoratorStart = -1;
        for (LogicalLines.Line line : LogicalLines.of(physical)) {
            while (!open.isEmpty() && open.peek().indent >= line.indent()) {
                open.pop();
            }
            for (Scope enclosing : open) {
                enclosing.end = line.last();
            }
            if (line.code().startsWith("@")) {
                if (decoratorStart < 0) {
                    decoratorStart = line.first();
                }
                continue;
            }
            Matcher header = HEADER.matcher(line.code());
            if (header.lookingAt()) {
                boolean isDef = header.group(1) != null;
                Scope scope = new Scope(isDef ? header.group(2) : header.group(3), isDef, open.peek(), line.indent(),
                        decoratorStart >= 0 ? decoratorStart : line.first(), line.last());
                scopes.add(scope);
                open.push(scope); // def f(): pass needs no special case: valid Python never indents the next line deeper
            }
            decoratorStart = -1;
        }
        List<PyFunction> functions = new ArrayList<>();
        for (Scope s : scopes) {
            if (s.isDef) {
                String text = String.join("\n", physical.subList(s.start, s.end + 1));
                functions.add(new PyFunction(s.qualname(), s.start + 1, s.end + 1, text));
            }
        }
        return functions;
    }

    /** A {@code def} or {@code class} statement and, while it is open, the last line of its body so far. */
    private static final class Scope {
        final String name;
        final boolean isDef;
        final Scope parent;
        final int indent;
        final int start; // 0-based, first decorator line
        int end; // 0-based

        Scope(String name, boolean isDef, Scope parent, int indent, int start, int end) {
            this.name = name;
            this.isDef = isDef;
            this.parent = parent;
            this.indent = indent;
            this.start = start;
            this.end = end;
        }

        String qualname() {
            return parent == null ? name : parent.qualname() + "." + name;
        }
    }
}
