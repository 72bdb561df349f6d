package vllmrace.stress.verdict;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Comparator;
import java.util.List;
import java.util.Optional;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;

/**
 * The JDK the JCStress child runs on (its forks inherit it). JCStress 0.16 on JDK 17 splits every test on
 * +-UseBiasedLocking, two forks a test; JDK 18 and later have no biased locking, so a newer JDK halves the forks.
 * {@code -Dvllmrace.jcstress.jdk} chooses: {@code auto} (the default) takes the running JDK if it is 18 or newer,
 * else the newest JDK 18+ installed beside it (the JDKs in the running JDK's parent folder, e.g. /usr/lib/jvm), else
 * the running one; {@code current} always the running one; a path, that JDK. The suite passes on JDK 17 alone.
 */
public record JcstressJava(Path home, int feature) {
    private static final Pattern VERSION = Pattern.compile("(?m)^JAVA_VERSION=\"(\\d+)");

    public Path executable() {
        return home.resolve("bin").resolve("java");
    }

    /** The JDK {@code -Dvllmrace.jcstress.jdk} selects. */
    public static JcstressJava resolve() {
        Path running = Path.of(System.getProperty("java.home"));
        JcstressJava current = new JcstressJava(running, Runtime.version().feature());
        String choice = System.getProperty("vllmrace.jcstress.jdk", "auto").strip();
        if (choice.equals("current")) {
            return current;
        }
        if (!choice.equals("auto") && !choice.isEmpty()) {
            Path home = Path.of(choice);
            return of(home).orElseThrow(() -> new IllegalArgumentException(
                    "vllmrace.jcstress.jdk: " + home + " is not a JDK (no bin/java and release file)"));
        }
        if (current.feature() >= 18) {
            return current;
        }
        return installedBeside(running).filter(j -> j.feature() >= 18).max(Comparator.comparingInt(JcstressJava::feature))
                .orElse(current);
    }

    private static Stream<JcstressJava> installedBeside(Path running) {
        Path parent = running.getParent();
        if (parent == null || !Files.isDirectory(parent)) {
            return Stream.empty();
        }
        try (Stream<Path> dirs = Files.list(parent)) {
            List<Path> all = dirs.toList();
            return all.stream().map(JcstressJava::of).flatMap(Optional::stream);
        } catch (IOException e) {
            return Stream.empty();
        }
    }

    /** The JDK at {@code home}, read from its {@code release} file, if it is one. */
    static Optional<JcstressJava> of(Path home) {
        Path release = home.resolve("release");
        if (!Files.isExecutable(home.resolve("bin").resolve("java")) || !Files.isRegularFile(release)) {
            return Optional.empty();
        }
        try {
            Matcher m = VERSION.matcher(Files.readString(release));
            return m.find() ? Optional.of(new JcstressJava(home.toRealPath(), Integer.parseInt(m.group(1)))) : Optional.empty();
        } catch (IOException | NumberFormatException e) {
            return Optional.empty();
        }
    }

    @Override
    public String toString() {
        return "JDK " + feature + " (" + home + ")";
    }
}
