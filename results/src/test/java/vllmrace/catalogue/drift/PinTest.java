package vllmrace.catalogue.drift;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/** A pin is checked when it is made, so a typo in the pin list fails with the field and value it is about. */
class PinTest {
    static final String FILE = "vllm/v1/core/sched/scheduler.py";
    static final String COMMIT = "00024d3127e1a9d3c8b2f0e4a5b6c7d8e9f01234";
    static final String PRINT = "0123456789abcdef";

    @Test
    void aValidPinKeepsItsFieldsAndQuotesItsShortCommit() {
        Pin pin = new Pin(FILE, "Scheduler.update_from_output", COMMIT, "0123456789ABCDEF");
        assertEquals(FILE, pin.file());
        assertEquals("Scheduler.update_from_output", pin.qualname());
        assertEquals(COMMIT, pin.commit());
        assertEquals(PRINT, pin.fingerprint(), "stored lowercase, as Fingerprint prints it");
        assertEquals("00024d31", pin.shortCommit());
    }

    @ParameterizedTest(name = "[{index}] {4}")
    @CsvSource(delimiter = '|', nullValues = "NULL", value = {
        "'' | Scheduler.f | 00024d3127e1a9d3c8b2f0e4a5b6c7d8e9f01234 | 0123456789abcdef | file is empty",
        "NULL | Scheduler.f | 00024d3127e1a9d3c8b2f0e4a5b6c7d8e9f01234 | 0123456789abcdef | file is empty",
        "/abs/vllm/x.py | Scheduler.f | 00024d3127e1a9d3c8b2f0e4a5b6c7d8e9f01234 | 0123456789abcdef | repo-relative",
        "vllm\\x.py | Scheduler.f | 00024d3127e1a9d3c8b2f0e4a5b6c7d8e9f01234 | 0123456789abcdef | repo-relative",
        "vllm/../../etc/passwd | Scheduler.f | 00024d3127e1a9d3c8b2f0e4a5b6c7d8e9f01234 | 0123456789abcdef | no '..'",
        "vllm/x.py | '' | 00024d3127e1a9d3c8b2f0e4a5b6c7d8e9f01234 | 0123456789abcdef | qualname is empty",
        "vllm/x.py | Scheduler. | 00024d3127e1a9d3c8b2f0e4a5b6c7d8e9f01234 | 0123456789abcdef | not a dotted Python name",
        "vllm/x.py | Scheduler.f | 00024d31 | 0123456789abcdef | 40 lowercase hex",
        "vllm/x.py | Scheduler.f | 00024D3127E1A9D3C8B2F0E4A5B6C7D8E9F01234 | 0123456789abcdef | 40 lowercase hex",
        "vllm/x.py | Scheduler.f | NULL | 0123456789abcdef | 40 lowercase hex",
        "vllm/x.py | Scheduler.f | 00024d3127e1a9d3c8b2f0e4a5b6c7d8e9f01234 | 0123456789abcde | 16 hex digits",
        "vllm/x.py | Scheduler.f | 00024d3127e1a9d3c8b2f0e4a5b6c7d8e9f01234 | 0123456789abcdeg | 16 hex digits",
    })
    void anInvalidFieldIsRejectedWithAMessageNamingIt(String file, String qualname, String commit, String print,
            String expected) {
        IllegalArgumentException e =
                assertThrows(IllegalArgumentException.class, () -> new Pin(file, qualname, commit, print));
        assertTrue(e.getMessage().contains(expected), e.getMessage());
    }
}
