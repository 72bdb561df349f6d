package vllmrace.hunt;

import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import vllmrace.hunt.ConnectorProgram.Child;
import vllmrace.model.asyncio.Coroutine;
import vllmrace.model.connector.multi.ChildConnector;
import vllmrace.model.connector.multi.LmCacheConnector;
import vllmrace.model.connector.multi.NixlDecodeConnector;
import vllmrace.model.deploy.ConfigSwitch;
import vllmrace.model.deploy.Configuration;
import vllmrace.model.fix.FixSet;
import vllmrace.races.Clean;
import vllmrace.races.ModellingError;
import vllmrace.races.RaceOutcome;
import vllmrace.races.RigScenario;
import vllmrace.races.Violating;
import vllmrace.races.connector.ConnectorRig;

/**
 * A {@link ConnectorProgram} as a two-actor scenario over one decode EngineCore whose connector is a MultiConnector of
 * the program's children ({@link ConnectorRig}, as the connector races run; the LMCache children are LMCache's own MP
 * connector when the deployment says so). The requests are set up (a remote prefill for the NIXL child, a cached prompt
 * for every LMCache-like child, a handshake set to fail), added and admitted; the set-up iterations run; then the actors.
 * The arbiter lets every transfer complete, settles the engine and judges: any detector finding is a violation.
 */
public final class ConnectorHuntScenario extends RigScenario<ConnectorRig> {

    /** How one run ended. */
    public enum Outcome implements RaceOutcome {
        @Clean("no detector fired, liveness included") CLEAN,
        @Violating(value = "a detector fired", anyDetector = true) VIOLATION,
        @ModellingError("an actor raised, or the engine never settled: a modelling error") MODEL_ERROR
    }

    private final List<NixlDecodeConnector> nixl = new ArrayList<>();
    private final List<LmCacheConnector> lmcache = new ArrayList<>();
    private final List<ChildConnector> children = new ArrayList<>();

    public ConnectorHuntScenario(ConnectorProgram program, FixSet fixes, Configuration configuration) {
        super(new ConnectorRig(Objects.requireNonNull(fixes, "fixes"), Objects.requireNonNull(configuration, "configuration"),
                program.poolBlocks(), kv -> program.children().stream().map(child -> (ChildConnector) switch (child) {
                    case NIXL -> new NixlDecodeConnector(child.configName(), kv, fixes);
                    case LMCACHE, LMCACHE_SAVING -> configuration.isOn(ConfigSwitch.OUT_OF_TREE_LMCACHE_MP)
                            ? LmCacheConnector.outOfTree(child.configName(), kv, child == Child.LMCACHE_SAVING)
                            : new LmCacheConnector(child.configName(), kv, child == Child.LMCACHE_SAVING, fixes, configuration);
                    case OFFLOADING -> LmCacheConnector.offloader(child.configName(), kv, fixes, configuration);
                }).toList()), vllmrace.races.Params.DEFAULT);
        children.addAll(rig.children());
        for (ChildConnector child : children) {
            if (child instanceof NixlDecodeConnector n) {
                nixl.add(n);
            } else {
                lmcache.add((LmCacheConnector) child);
            }
        }
        int bs = ConnectorRig.BLOCK_SIZE;
        List<String> ids = new ArrayList<>();
        for (ConnectorProgram.Request r : program.requests()) {
            String id = engineId(r.id());
            if (r.remote()) {
                if (r.handshakeFails()) {
                    nixl.forEach(n -> n.handshakeWillFail(id));
                }
                nixl.forEach(n -> n.remotePrefill(id, r.promptTokens(bs)));
            }
            if (r.cached()) {
                for (int i = 0; i < children.size(); i++) {
                    if (program.children().get(i).caches()) {
                        ((LmCacheConnector) children.get(i)).cachedPrefix(id, r.promptTokens(bs));
                    }
                }
            }
            rig.sendAdd(id, r.promptTokens(bs), r.maxTokens());
            ids.add(id);
        }
        rig.admit(ids.toArray(String[]::new));
        for (int i = 0; i < program.setupIterations(); i++) {
            rig.runBusyLoopOnce();
        }
        Coroutine.Builder client = Coroutine.builder(rig.busyLoopEvents(), "client and workers");
        for (ConnectorOp op : program.actor1()) {
            client.step(describe(op), () -> apply(op));
        }
        ConnectorRig.Actor loop = rig.actor("EngineCore busy loop + worker");
        for (ConnectorOp op : program.actor2()) {
            if (op.kind() == ConnectorOp.Kind.ITERATION) {
                loop.iteration();
            } else {
                loop.worker(describe(op), () -> apply(op));
            }
        }
        actors(client.build(), loop.build());
    }

    /** The engine id of a client id: one ADD each, so the id itself, or with #27987 the id and its suffix. */
    private String engineId(String clientId) {
        return rig.engineId(clientId, 1);
    }

    private static String describe(ConnectorOp op) {
        return switch (op.kind()) {
            case ABORT -> "EngineCoreProc.process_input_sockets: ABORT(" + op.target() + ")";
            case LOAD_LANDS -> "workers: every load of " + op.target() + " in flight lands (NIXL READ, LMCache retrieve)";
            case LOAD_FAILS -> "NIXL worker: the pull of " + op.target() + " fails, every handle in progress ERR, its blocks invalid";
            case HANDSHAKES_FAIL -> "NIXL handshake thread: the failing handshakes fail (_handle_failed_transfer(id, None))";
            case TRANSFERS_COMPLETE -> "workers: every in-flight KV transfer completes";
            case ITERATION -> "EngineCore.run_busy_loop: one iteration";
        };
    }

    private void apply(ConnectorOp op) {
        String id = op.target() == null ? null : engineId(op.target());
        switch (op.kind()) {
            case ABORT -> rig.abortArrives(id);
            case LOAD_LANDS -> {
                nixl.stream().filter(n -> n.isPullInFlight(id)).forEach(n -> handles(() -> n.completePull(id)));
                lmcache.stream().filter(l -> l.isLoadInFlight(id)).forEach(l -> l.completeLoad(id));
            }
            // only NIXL's: the LMCache MP connector reports no load error (lmcache_mp_connector.py@474b0b8c
            // get_block_ids_with_load_errors: "# TODO: add error tracking", return set()), so its retrieve never fails visibly
            case LOAD_FAILS -> nixl.stream().filter(n -> n.isPullInFlight(id)).forEach(n -> handles(() -> n.failPull(id)));
            case HANDSHAKES_FAIL -> nixl.forEach(NixlDecodeConnector::failPendingHandshakes);
            case TRANSFERS_COMPLETE -> children.forEach(ChildConnector::finishInFlightTransfers);
            case ITERATION -> throw new IllegalArgumentException("the client does not iterate the busy loop");
        }
    }

    /**
     * A NIXL pull still waiting for its handshake has no handle in progress: the worker event does not apply, and the
     * connector refuses it with nothing changed, so the operation does nothing (operations are total).
     */
    private static void handles(Runnable event) {
        try {
            event.run();
        } catch (vllmrace.model.connector.UnknownTransferException e) {
            // no handle posted yet: nothing to land or fail
        }
    }

    /** Unused: the hunt classifies its runs in {@link #arbiter()}, any detector a finding; declared for the one base. */
    @Override
    protected List<vllmrace.races.Ending> endings() {
        return List.of(ending(Outcome.CLEAN));
    }

    @Override
    public Outcome arbiter() {
        try {
            rig.runToQuiescence();
        } catch (IllegalStateException e) {
            return Outcome.MODEL_ERROR;
        }
        if (actorFailed()) {
            return Outcome.MODEL_ERROR;
        }
        return rig.violations().isEmpty() ? Outcome.CLEAN : Outcome.VIOLATION;
    }
}
