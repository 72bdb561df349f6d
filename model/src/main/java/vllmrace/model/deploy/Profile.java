package vllmrace.model.deploy;

import java.util.Arrays;
import java.util.Objects;
import java.util.stream.Collectors;
import vllmrace.model.asyncio.YieldCondition;
import vllmrace.model.fix.FixSet;

/**
 * A deployment of vLLM main: the fixes vLLM has merged ({@link FixSet#upstreamMain()}, from each fix's provenance)
 * run under one {@link Configuration}. Declared once here and read by every engine, the catalogue and the hunt: a
 * race's vLLM-main verdict is computed under each profile, never assumed for all deployments.
 */
public enum Profile {
    /** Upstream's defaults: request ids randomized (#27987), vLLM's in-tree connectors (the LMCache MP child with #47505). */
    MAIN("main", "vLLM main", "upstream defaults: request-id randomization on, in-tree connectors", deployed()),
    /** {@code VLLM_DISABLE_REQUEST_ID_RANDOMIZATION=1}, as advised for some P/D set-ups. */
    MAIN_IDS_NOT_RANDOMIZED("main-ids-not-randomized", "vLLM main, ids not randomized",
            "VLLM_DISABLE_REQUEST_ID_RANDOMIZATION=1 (#34415, merged; for P2P NCCL, MoRIIO and Mooncake P/D set-ups; #45688, "
                    + "open, would make it the P/D default)",
            deployed(ConfigSwitch.REQUEST_ID_RANDOMIZATION_DISABLED)),
    /** The MultiConnector's LMCache child is LMCache's own MP connector, which ignores {@code num_external_tokens}. */
    MAIN_OOT_LMCACHE("main-oot-lmcache", "vLLM main + out-of-tree LMCache MP",
            "the LMCache child is LMCache's own MP connector in a version without the num_external_tokens guard "
                    + "(LMCache@5edba3af), which loads without being chosen",
            deployed(ConfigSwitch.OUT_OF_TREE_LMCACHE_MP)),
    /** The sync {@code Scheduler} with one batch in flight ({@code async_scheduling=False}, pipeline-parallel size 1). */
    MAIN_SYNC_SCHEDULING("main-sync-scheduling", "vLLM main, sync scheduling",
            "async_scheduling=False at pipeline-parallel size 1 (--no-async-scheduling; upstream's choice for a non-EAGLE "
                    + "speculative method or an executor without async support): the Scheduler, one batch in flight",
            deployed(ConfigSwitch.SYNC_SCHEDULING));

    /**
     * A deployment's configuration: its switches, and every yield condition vLLM can produce ({@link
     * YieldCondition#producedByVllmMain()}, e.g. an output batch over 128 outputs under load), so a verdict covers the
     * interleavings the deployment can reach. More conditions only add yield points, never remove one.
     */
    private static Configuration deployed(ConfigSwitch... switches) {
        return Configuration.of(switches).withYields(YieldCondition.producedByVllmMain());
    }

    private final String id;
    private final String label;
    private final String deployment;
    private final Configuration configuration;

    Profile(String id, String label, String deployment, Configuration configuration) {
        this.id = id;
        this.label = label;
        this.deployment = deployment;
        this.configuration = configuration;
    }

    /** The command-line name ({@code --profile main}). */
    public String id() {
        return id;
    }

    /** How results and test names read it ({@code vLLM main, ids not randomized}). */
    public String label() {
        return label;
    }

    /** Who runs this deployment, in one line. */
    public String deployment() {
        return deployment;
    }

    /** vLLM main's merged fixes: the same in every profile (a profile changes configuration, never code). */
    public FixSet fixes() {
        return FixSet.upstreamMain();
    }

    public Configuration configuration() {
        return configuration;
    }

    /** The profile a command-line name names, or null. */
    public static Profile find(String id) {
        Objects.requireNonNull(id, "id");
        return Arrays.stream(values()).filter(p -> p.id.equals(id)).findFirst().orElse(null);
    }

    /** The profile a command-line name names. */
    public static Profile byId(String id) {
        Profile profile = find(id);
        if (profile == null) {
            throw new IllegalArgumentException("no profile '" + id + "'; known profiles: " + ids());
        }
        return profile;
    }

    /** The known profile names, comma-separated. */
    public static String ids() {
        return Arrays.stream(values()).map(Profile::id).collect(Collectors.joining(", "));
    }
}
