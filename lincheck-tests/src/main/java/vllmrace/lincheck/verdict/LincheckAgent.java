package vllmrace.lincheck.verdict;

import net.bytebuddy.agent.ByteBuddyAgent;
import org.jetbrains.lincheck.jvm.agent.InstrumentationMode;
import org.jetbrains.lincheck.jvm.agent.JavaAgentAttachType;
import org.jetbrains.lincheck.jvm.agent.LincheckInstrumentation;

/**
 * Lincheck's bytecode agent, installed once per JVM in model-checking mode and left installed.
 *
 * <p>Left to itself, Lincheck 3.7 attaches its agent for every check ({@code withLincheckJavaAgent}): it installs its
 * transformer, retransforms each class the check touches the first time it touches it, and retransforms every one of
 * them back when the check ends. Measured here: about one second a check (a 2-invocation check took 1.4 s, 0.3 s with
 * the agent kept), plus the JIT recompiling the same classes after each retransformation. With the attach type
 * {@link JavaAgentAttachType#STATIC} (what a {@code -javaagent} attach sets) {@code LinChecker} runs the check without
 * installing or uninstalling: the classes stay instrumented for the JVM's life. Code run outside a check passes the
 * injected hooks, which return at once there.
 *
 * <p>Every check of this suite is model checking ({@link LincheckRun#check} takes {@code ModelCheckingOptions}), the
 * mode installed here, so each check sees the instrumentation it would have installed itself.
 */
public final class LincheckAgent {
    private static boolean installed;

    private LincheckAgent() {
    }

    /** Installs the agent unless this JVM has one; later calls do nothing. */
    public static synchronized void installOnce() {
        if (installed) {
            return;
        }
        LincheckInstrumentation agent = LincheckInstrumentation.INSTANCE;
        if (agent.getJavaAgentAttachType() == null) {
            agent.attachJavaAgentStatically(ByteBuddyAgent.install());
            agent.install(InstrumentationMode.MODEL_CHECKING);
        }
        installed = true;
    }

    /** True when Lincheck runs its checks without attaching and detaching its agent (what {@link #installOnce} sets). */
    public static boolean keptForTheJvm() {
        return LincheckInstrumentation.INSTANCE.getJavaAgentAttachType() == JavaAgentAttachType.STATIC;
    }
}
