package vllmrace.races.derive;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * A scenario's header comment (the javadoc right above its class declaration), read from its source file and turned
 * into plain Markdown: the one place a race's story is written. Build-time only: {@link StoryIndex} and the JCStress
 * source generator read headers here; at run time the story comes from the index on the class path.
 */
public final class ScenarioHeader {
    private static final Pattern INLINE_TAG = Pattern.compile("\\{@(?:code|literal|link|linkplain)\\s+([^}]*)}");

    private ScenarioHeader() {
    }

    /** The source file of {@code scenarioClass} under {@code sourceRoot}. */
    public static Path sourceOf(Path sourceRoot, Class<?> scenarioClass) {
        Class<?> top = scenarioClass;
        while (top.getEnclosingClass() != null) {
            top = top.getEnclosingClass();
        }
        return sourceRoot.resolve(top.getName().replace('.', '/') + ".java");
    }

    /** The header of {@code scenarioClass} as Markdown. */
    public static String read(Path sourceRoot, Class<?> scenarioClass) throws IOException {
        Path source = sourceOf(sourceRoot, scenarioClass);
        String text = Files.readString(source);
        Matcher declaration = Pattern.compile("(?m)^public (?:final |abstract )?class " + scenarioClass.getSimpleName() + "\\b")
                .matcher(text);
        if (!declaration.find()) {
            throw new IllegalStateException(source + " declares no public class " + scenarioClass.getSimpleName());
        }
        int end = text.lastIndexOf("*/", declaration.start());
        int start = end < 0 ? -1 : text.lastIndexOf("/**", end);
        if (start < 0 || !text.substring(end + 2, declaration.start()).isBlank()) {
            throw new IllegalStateException(source + ": no header comment right above class " + scenarioClass.getSimpleName());
        }
        return toMarkdown(text.substring(start + 3, end));
    }

    /** Javadoc body (without its delimiters) to Markdown: paragraphs, {@code <pre>} as fenced blocks, inline tags as code. */
    static String toMarkdown(String javadoc) {
        List<String> lines = new ArrayList<>();
        for (String line : javadoc.split("\n", -1)) {
            lines.add(line.replaceFirst("^\\s*\\* ?", "").replaceFirst("^\\s+$", ""));
        }
        StringBuilder md = new StringBuilder();
        boolean pre = false;
        for (String line : lines) {
            String trimmed = line.strip();
            if (trimmed.equals("<pre>")) {
                md.append("\n```\n");
                pre = true;
                continue;
            }
            if (trimmed.equals("</pre>")) {
                md.append("```\n\n");
                pre = false;
                continue;
            }
            if (pre) {
                md.append(unescape(line)).append('\n');
                continue;
            }
            String prose = trimmed.replace("<p>", "\n\n").replace("<li>", "\n- ")
                    .replaceAll("</?(b|strong)>", "**").replaceAll("</?(ol|ul|li|i|em)>", "");
            Matcher tag = INLINE_TAG.matcher(prose);
            StringBuilder sb = new StringBuilder();
            while (tag.find()) {
                String inner = tag.group(1).strip();
                int space = inner.indexOf(' ');
                boolean link = tag.group().startsWith("{@link");
                String shown = link && space > 0 ? inner.substring(space + 1) : (link ? inner.replace('#', '.') : inner);
                tag.appendReplacement(sb, Matcher.quoteReplacement("`" + shown + "`"));
            }
            tag.appendTail(sb);
            md.append(unescape(sb.toString())).append('\n');
        }
        return md.toString().replaceAll("\n{3,}", "\n\n").strip() + "\n";
    }

    private static String unescape(String s) {
        return s.replace("&lt;", "<").replace("&gt;", ">").replace("&amp;", "&").replace("&#64;", "@");
    }
}
