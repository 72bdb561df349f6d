package vllmrace.catalogue;

import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import vllmrace.races.Race;
import vllmrace.races.Variant;

/**
 * The table {@code fray-tests/bench --out FILE} writes: a header
 * {@code race variant scheduler run iterations millis found outcome}, then a row per Fray run (scheduler POS or PCT;
 * found true or false; outcome the judged outcome's name, {@code CLEAN}, or {@code MODEL_ERROR:<text>}). A modelling
 * error is never a find: {@link Row#error()} says so whatever {@code found} claims.
 */
final class FrayTsv {
    static final String HEADER = "race\tvariant\tscheduler\trun\titerations\tmillis\tfound\toutcome";
    static final String MODEL_ERROR = "MODEL_ERROR:";

    /** One Fray run of one race's variant under one scheduler. */
    record Row(Race race, Variant variant, String scheduler, int run, long iterations, long millis, boolean found, String outcome) {
        /** A modelling error (the judge's modelling-error outcome, an actor that threw): never a find. */
        boolean error() {
            return outcome.startsWith(MODEL_ERROR);
        }

        boolean foundRace() {
            return found && !error();
        }
    }

    /** Bad table: the message names the line. */
    static final class FormatException extends Exception {
        FormatException(String message) {
            super(message);
        }
    }

    private FrayTsv() {
    }

    static List<Row> parse(List<String> lines) throws FormatException {
        if (lines.isEmpty() || !lines.get(0).strip().equals(HEADER)) {
            throw new FormatException("line 1: expected the header '" + HEADER.replace('\t', ' ') + "', got '"
                    + (lines.isEmpty() ? "" : lines.get(0).replace('\t', ' ')) + "'");
        }
        List<Row> rows = new ArrayList<>();
        for (int i = 1; i < lines.size(); i++) {
            String line = lines.get(i);
            if (line.isBlank()) {
                continue;
            }
            String[] f = line.split("\t", -1);
            String where = "line " + (i + 1) + ": ";
            if (f.length != 8) {
                throw new FormatException(where + "8 tab-separated columns expected, got " + f.length);
            }
            Race race;
            try {
                race = Race.valueOf(f[0]);
            } catch (IllegalArgumentException e) {
                throw new FormatException(where + "no race '" + f[0] + "'");
            }
            Variant variant = switch (f[1].toLowerCase(Locale.ROOT)) {
                case "reported" -> Variant.REPORTED;
                case "fixed" -> Variant.FIXED;
                default -> throw new FormatException(where + "variant is reported or fixed, got '" + f[1] + "'");
            };
            String scheduler = f[2].toUpperCase(Locale.ROOT);
            if (!scheduler.equals("POS") && !scheduler.equals("PCT")) {
                throw new FormatException(where + "scheduler is POS or PCT, got '" + f[2] + "'");
            }
            if (!f[6].equals("true") && !f[6].equals("false")) {
                throw new FormatException(where + "found is true or false, got '" + f[6] + "'");
            }
            if (f[7].isBlank()) {
                throw new FormatException(where + "no outcome");
            }
            rows.add(new Row(race, variant, scheduler, number(f[3], where + "run"), number(f[4], where + "iterations"),
                    number(f[5], where + "millis"), f[6].equals("true"), f[7]));
        }
        return rows;
    }

    private static int number(String text, String what) throws FormatException {
        try {
            int n = Integer.parseInt(text.strip());
            if (n >= 0) {
                return n;
            }
        } catch (NumberFormatException e) {
            // falls through
        }
        throw new FormatException(what + " is a whole number (0 or more), got '" + text + "'");
    }
}
