package vllmrace.catalogue.drift;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.List;
import java.util.Optional;
import org.junit.jupiter.api.Test;

/** Functions are found by their scope chain and Python's indentation rules, whatever surrounds them. */
class PythonSourceTest {

    private static String py(String... lines) {
        return String.join("\n", lines);
    }

    private static PyFunction found(String source, String qualname) {
        Optional<PyFunction> f = PythonSource.find(source, qualname);
        assertTrue(f.isPresent(), qualname + " not found");
        return f.get();
    }

    private static void assertLines(PyFunction f, int start, int end) {
        assertEquals(start + "-" + end, f.startLine() + "-" + f.endLine(), f.qualname());
    }

    @Test
    void moduleLevelDef() {
        String src = py(
                "from vllm.logger import init_logger",
                "",
                "logger = init_logger(__name__)",
                "",
                "",
                "def cdiv(a: int, b: int) -> int:",
                "    \"\"\"Ceiling division.\"\"\"",
                "    return -(a // -b)",
                "",
                "",
                "def round_up(x: int, y: int) -> int:",
                "    return ((x + y - 1) // y) * y");
        PyFunction f = found(src, "cdiv");
        assertLines(f, 6, 8);
        assertEquals(py("def cdiv(a: int, b: int) -> int:", "    \"\"\"Ceiling division.\"\"\"", "    return -(a // -b)"),
                f.text());
        assertLines(found(src, "round_up"), 11, 12);
    }

    @Test
    void methodEndsWhereTheNextMethodStarts() {
        String src = py(
                "class Scheduler(SchedulerInterface):",
                "",
                "    def __init__(self, vllm_config):",
                "        self.running: list[Request] = []",
                "",
                "    def update_from_output(self, scheduler_output, model_runner_output):",
                "        outputs = defaultdict(list)",
                "        for request in self.running:",
                "            outputs[request.client_index].append(request)",
                "",
                "        return outputs",
                "",
                "    def finish_requests(self, request_ids, finished_status):",
                "        pass",
                "",
                "",
                "def module_after():",
                "    pass");
        PyFunction f = found(src, "Scheduler.update_from_output");
        assertLines(f, 6, 11);
        assertTrue(f.text().endsWith("        return outputs"), f.text());
        assertLines(found(src, "Scheduler.finish_requests"), 13, 14);
        assertLines(found(src, "module_after"), 17, 18);
        assertFalse(PythonSource.find(src, "update_from_output").isPresent(), "a method is not a module-level def");
    }

    @Test
    void methodOfANestedClass() {
        String src = py(
                "class EngineCoreProc:",
                "    class _Handler:",
                "        def handle(self, msg):",
                "            return msg",
                "",
                "    def run_busy_loop(self):",
                "        pass");
        assertLines(found(src, "EngineCoreProc._Handler.handle"), 3, 4);
        assertFalse(PythonSource.find(src, "EngineCoreProc.handle").isPresent());
        assertFalse(PythonSource.find(src, "_Handler.handle").isPresent(), "Inner is not a module-level class");
    }

    @Test
    void asyncDef() {
        String src = py(
                "class AsyncLLM(EngineClient):",
                "    async def generate(self, prompt, sampling_params, request_id):",
                "        q = await self.add_request(request_id, prompt, sampling_params)",
                "        async for out in q:",
                "            yield out",
                "",
                "    async def abort(self, request_id: str) -> None:",
                "        await self.engine_core.abort_requests_async([request_id])");
        PyFunction f = found(src, "AsyncLLM.generate");
        assertLines(f, 2, 5);
        assertTrue(f.text().startsWith("    async def generate("), f.text());
        assertLines(found(src, "AsyncLLM.abort"), 7, 8);
    }

    @Test
    void decoratorsSingleAndMultiLineBelongToTheFunctionWithItsMultiLineSignature() {
        String src = py(
                "class KVCacheManager:",
                "    @property",
                "    def usage(self) -> float:",
                "        return self.block_pool.get_usage()",
                "",
                "    @functools.lru_cache(",
                "        maxsize=1)",
                "    @staticmethod",
                "    def allocate_slots(",
                "        request: Request,",
                "        num_new_tokens: int,",
                "        num_lookahead_tokens: int = 0,",
                ") -> Optional[KVCacheBlocks]:", // a closing bracket at column 0 is still the signature
                "        if num_new_tokens == 0:",
                "            raise ValueError(\"num_new_tokens must be greater than 0\")",
                "        return None",
                "",
                "    def free(self, request: Request) -> None:",
                "        self.coordinator.free(request.request_id)");
        PyFunction usage = found(src, "KVCacheManager.usage");
        assertLines(usage, 2, 4);
        assertTrue(usage.text().startsWith("    @property\n    def usage"), usage.text());
        PyFunction allocate = found(src, "KVCacheManager.allocate_slots");
        assertLines(allocate, 6, 16);
        assertTrue(allocate.text().startsWith("    @functools.lru_cache(\n        maxsize=1)\n    @staticmethod\n"));
        assertLines(found(src, "KVCacheManager.free"), 18, 19);
    }

    @Test
    void definitionsInsideTripleQuotedStringsAreText() {
        String src = py(
                "def get_kv_cache_config(vllm_config, kv_cache_spec):",
                "    \"\"\"Example, at a lower indentation than the body:",
                "",
                "def fake():",
                "    pass",
                "class Fake:",
                "    '''not a docstring either'''",
                "    \"\"\"",
                "    template = r'''",
                "class AlsoFake:",
                "  def fake(self): ...",
                "'''",
                "    prompt = f\"\"\"{vllm_config}",
                "def fake2():\"\"\"",
                "    return template, prompt",
                "",
                "",
                "def after():",
                "    pass");
        assertLines(found(src, "get_kv_cache_config"), 1, 15);
        assertLines(found(src, "after"), 18, 19);
        List<String> names = PythonSource.functions(src).stream().map(PyFunction::qualname).toList();
        assertEquals(List.of("get_kv_cache_config", "after"), names);
        assertFalse(PythonSource.find(src, "Fake.fake").isPresent());
    }

    @Test
    void commentLinesAtALowerIndentationDoNotEndTheBody() {
        String src = py(
                "class Scheduler:",
                "    def schedule(self):",
                "        token_budget = self.max_num_scheduled_tokens",
                "# a comment at column 0",
                "    # a comment at the class's level",
                "",
                "        return token_budget",
                "",
                "    def _try_schedule_encoder_inputs(self):",
                "        pass");
        assertLines(found(src, "Scheduler.schedule"), 2, 7);
        assertLines(found(src, "Scheduler._try_schedule_encoder_inputs"), 9, 10);
    }

    @Test
    void trailingBlankAndCommentLinesAreNotPartOfTheFunction() {
        String src = py(
                "def free_blocks(self, blocks):",
                "    self.free_block_queue.append_n(blocks)",
                "    # TODO: cache eviction",
                "",
                "# ---- helpers ----",
                "",
                "def helper():",
                "    pass");
        PyFunction f = found(src, "free_blocks");
        assertLines(f, 1, 2);
        assertFalse(f.text().contains("TODO"));
    }

    @Test
    void hashesAndQuotesInsideOneLineStrings() {
        String src = py(
                "def format_stats(stats):",
                "    header = \"# requests (\"  # a real comment: a (, a \"\"\" and a ' quote",
                "    fence = '\"\"\"'",
                "    it = \"it's {\"",
                "    escaped = 'a \\' still (the string'",
                "    return header + fence + it + escaped",
                "def parse(line):",
                "    return line.split('#')[0]");
        assertLines(found(src, "format_stats"), 1, 6);
        assertLines(found(src, "parse"), 7, 8);
    }

    @Test
    void aBackslashAtTheEndOfAOneLineStringContinuesTheString() {
        String src = py(
                "def warn_deprecated(name):",
                "    msg = \"the option is deprecated \\",
                "def not_a_def(): ( still the string\"",
                "    return msg",
                "def after():",
                "    pass");
        assertLines(found(src, "warn_deprecated"), 1, 4);
        assertEquals(List.of("warn_deprecated", "after"),
                PythonSource.functions(src).stream().map(PyFunction::qualname).toList());
    }

    @Test
    void anUnterminatedStringEndsAtItsLine() {
        // a checkout mid-edit: the syntax error must not hide the rest of the file
        String src = py(
                "def broken():",
                "    s = \"oops (",
                "    return s",
                "def fine():",
                "    pass");
        assertLines(found(src, "broken"), 1, 3);
        assertLines(found(src, "fine"), 4, 5);
    }

    @Test
    void backslashContinuationIsOneLogicalLine() {
        String src = py(
                "class Request:",
                "    def num_tokens(self):",
                "        n = len(self._all_token_ids) + \\",
                "0",
                "        return n",
                "    def is_finished(self):",
                "        return RequestStatus.is_finished(self.status)");
        assertLines(found(src, "Request.num_tokens"), 2, 5);
        assertLines(found(src, "Request.is_finished"), 6, 7);
    }

    @Test
    void lastDefinitionInTheSameScopeWins() {
        String src = py(
                "from typing import TYPE_CHECKING",
                "class Request:",
                "    def status_str(self):",
                "        return 'old'",
                "",
                "    def status_str(self):",
                "        return 'new'",
                "",
                "if TYPE_CHECKING:",
                "    def make_request(x: int) -> Request: ...",
                "else:",
                "    def make_request(x):",
                "        return Request(x)");
        PyFunction status = found(src, "Request.status_str");
        assertLines(status, 6, 7);
        assertTrue(status.text().contains("'new'"));
        PyFunction make = found(src, "make_request");
        assertLines(make, 12, 13);
        assertTrue(make.text().contains("return Request(x)"));
    }

    @Test
    void aMethodOfAnotherClassIsNotMatched() {
        String src = py(
                "class OutputProcessor:",
                "    def process_outputs(self, outputs):",
                "        pass",
                "class RequestState:",
                "    def make_request_output(self):",
                "        pass");
        assertFalse(PythonSource.find(src, "OutputProcessor.make_request_output").isPresent());
        assertFalse(PythonSource.find(src, "RequestState.process_outputs").isPresent());
        assertLines(found(src, "RequestState.make_request_output"), 5, 6);
    }

    @Test
    void aDefNestedInAMethodIsNotAMethod() {
        String src = py(
                "class GPUModelRunner:",
                "    def execute_model(self, scheduler_output):",
                "        def sample(logits):",
                "            return logits.argmax(-1)",
                "        return sample(self.model(scheduler_output))",
                "");
        assertFalse(PythonSource.find(src, "GPUModelRunner.sample").isPresent());
        PyFunction nested = found(src, "GPUModelRunner.execute_model.sample");
        assertLines(nested, 3, 4);
        assertLines(found(src, "GPUModelRunner.execute_model"), 2, 5);
    }

    @Test
    void tabsAdvanceToTheNextMultipleOfEight() {
        assertEquals(8, LogicalLines.indentOf("\tx"));
        assertEquals(8, LogicalLines.indentOf("   \tx"));
        assertEquals(10, LogicalLines.indentOf("\t  x"));
        assertEquals(16, LogicalLines.indentOf("\t\tx"));
        String src = py(
                "class Legacy:",
                "\tdef step(self):",
                "\t\tif self.done:",
                "\t\t\treturn None",
                "                return self.run()", // 16 spaces: the body's level, as two tabs are
                "\tdef run(self):",
                "\t\tpass");
        assertLines(found(src, "Legacy.step"), 2, 5);
        assertLines(found(src, "Legacy.run"), 6, 7);
    }

    @Test
    void classDecoratorsAreNotTheFirstMethodsDecorators() {
        String src = py(
                "@dataclass",
                "class CachedRequestState:",
                "    req_id: str",
                "",
                "    def num_tokens(self) -> int:",
                "        return len(self.prompt_token_ids)");
        assertLines(found(src, "CachedRequestState.num_tokens"), 5, 6);
    }

    @Test
    void windowsLineEndingsAreLines() {
        String src = "class A:\r\n    def f(self):\r\n        return 1\r\n\r\n    def g(self):\r\n        return 2\r\n";
        PyFunction f = found(src, "A.f");
        assertLines(f, 2, 3);
        assertEquals("    def f(self):\n        return 1", f.text());
    }

    @Test
    void aQualnameThatIsNotADottedNameIsRejected() {
        assertThrows(IllegalArgumentException.class, () -> PythonSource.find("def f(): pass", "A..f"));
        assertThrows(IllegalArgumentException.class, () -> PythonSource.find("def f(): pass", ""));
    }
}
