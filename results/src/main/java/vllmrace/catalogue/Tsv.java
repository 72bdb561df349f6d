package vllmrace.catalogue;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * A results table kept as tab-separated text under results/: rows keyed by their first {@code keyColumns}
 * columns, so a run over some races replaces their rows and keeps the others.
 */
final class Tsv {
    private final Path path;
    private final List<String> header;
    private final int keyColumns;
    private final Map<List<String>, List<String>> rows = new LinkedHashMap<>();

    Tsv(Path path, int keyColumns, String... header) {
        this.path = path;
        this.keyColumns = keyColumns;
        this.header = List.of(header);
        if (Files.exists(path)) {
            try {
                List<String> lines = Files.readAllLines(path);
                for (String line : lines.subList(Math.min(1, lines.size()), lines.size())) {
                    if (!line.isBlank()) {
                        put(Arrays.asList(line.split("\t", -1)));
                    }
                }
            } catch (IOException e) {
                throw new UncheckedIOException(e);
            }
        }
    }

    void put(List<String> row) {
        if (row.size() != header.size()) {
            throw new IllegalArgumentException(path + ": row has " + row.size() + " columns, header " + header.size() + ": " + row);
        }
        rows.put(List.copyOf(row.subList(0, keyColumns)), List.copyOf(row));
    }

    /** Drops every row whose first column is {@code first} (a race re-run replaces all its rows). */
    void removeFirst(String first) {
        rows.keySet().removeIf(key -> key.get(0).equals(first));
    }

    List<List<String>> rows() {
        return new ArrayList<>(rows.values());
    }

    /** The row with this key, or null. */
    List<String> get(String... key) {
        return rows.get(List.of(key));
    }

    /** Puts the rows in this order (the next {@link #write()} keeps it). */
    void sort(java.util.Comparator<List<String>> order) {
        List<List<String>> sorted = new ArrayList<>(rows.values());
        sorted.sort(order);
        rows.clear();
        sorted.forEach(this::put);
    }

    void write() {
        StringBuilder out = new StringBuilder(String.join("\t", header)).append('\n');
        for (List<String> row : rows.values()) {
            out.append(String.join("\t", row)).append('\n');
        }
        try {
            Files.createDirectories(path.getParent());
            Files.writeString(path, out.toString());
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }
}
