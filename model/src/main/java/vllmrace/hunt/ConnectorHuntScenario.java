package vllmrace.hunt;

import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import vllmrace.hunt.ConnectorProgram.Child;
import vllmrace.model.asyncio.Coroutine;
import vllmrace.model.connector.multi.ChildConnector;
import vllmrace.model.connector.multi.LmCacheConnector;
import vllmrace.model.connector.multi.NixlDecodeConnector;
import vllmrace.model.connector.multi.NixlLeaseHolder;
import vllmrace.model.connector.multi.NixlPullProducer;
import vllmrace.model.connector.multi.NixlPushConsumer;
import vllmrace.model.connector.multi.NixlPushProducer;
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
 * A {@link ConnectorProgram} as a two-actor scenario over one EngineCore whose connector is a MultiConnector of
 * the program's children ({@link ConnectorRig}, as the connector races run; the LMCache children are LMCache's own MP
 * connector when the deployment says so). The requests are set up (a remote prefill for the NIXL decode child, pulled
 * or pushed by two ranks, a cached prompt for every LMCache-like child, a handshake set to fail), added and admitted; the set-up iterations run; then the actors.
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
    /** The NIXL roles holding finished requests for a remote reader or writer, and the decode side pushed to. */
    private final List<NixlPullProducer> pullHolders = new ArrayList<>();
    private final List<NixlPushProducer> pushProducers = new ArrayList<>();
    private final List<NixlPushConsumer> pushConsumers = new ArrayList<>();
    private final List<NixlLeaseHolder> heartbeatTargets = new ArrayList<>();
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
                    case NIXL_PULL_PREFILL -> new NixlPullProducer(child.configName(), kv, fixes, child.leasePolls());
                    case NIXL_PUSH_PREFILL -> new NixlPushProducer(child.configName(), kv, fixes, child.leasePolls());
                    case NIXL_BIDIRECTIONAL -> new NixlPullProducer(child.configName(), kv, fixes, child.leasePolls(), true);
                    case NIXL_PUSH_DECODE -> new NixlPushConsumer(child.configName(), kv, fixes);
                }).toList()), vllmrace.races.Params.DEFAULT);
        children.addAll(rig.children());
        for (int i = 0; i < children.size(); i++) {
            ChildConnector child = children.get(i);
            if (child instanceof NixlDecodeConnector n) {
                nixl.add(n);
            } else if (child instanceof NixlPullProducer p) {
                pullHolders.add(p);
            } else if (child instanceof NixlPushProducer p) {
                pushProducers.add(p);
            } else if (child instanceof NixlPushConsumer c) {
                pushConsumers.add(c);
            } else {
                lmcache.add((LmCacheConnector) child);
            }
            if (program.children().get(i).heartbeats()) {
                heartbeatTargets.add((NixlLeaseHolder) children.get(i));
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
                pushConsumers.forEach(c -> c.remotePush(id, r.promptTokens(bs), PUSH_RANKS));
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

    /** The ranks on the other side of a push: two, as PushSendNeverReported and PushPostFailureDecodeWaits run. */
    static final int PUSH_RANKS = 2;

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
            case REMOTE_READ -> "remote side: its NIXL READ of " + op.target() + "'s held blocks completes DONE; its notification "
                    + "joins the queue";
            case HEARTBEAT -> "decode side: _send_heartbeats: \"HB:" + op.target() + "\" -> the prefill side's notification queue";
            case WRITES_POSTED -> "NIXL writer thread: " + op.target() + "'s PUSH_REG matched: one WRITE posted per D rank ("
                    + PUSH_RANKS + ")";
            case WRITE_COMPLETES -> "NIC: the first WRITE handle of " + op.target() + " in progress: check_xfer_state DONE";
            case WRITE_FAILS -> "NIC: the first WRITE handle of " + op.target() + " in progress: check_xfer_state ERR";
            case PUSH_LANDS -> "a prefill rank: its WRITE of " + op.target() + " lands; notification \"" + op.target() + ":"
                    + PUSH_RANKS + "\"";
            case PUSH_POST_FAILS -> "a prefill rank: _xfer_blocks fails to post its WRITE of " + op.target() + ": logged";
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
            case REMOTE_READ -> pullHolders.stream().filter(p -> p.handedTo(id)).forEach(p -> p.remoteRead(id));
            case HEARTBEAT -> heartbeatTargets.forEach(h -> h.heartbeat(id));
            case WRITES_POSTED -> pushProducers.stream().filter(p -> p.isLeased(id)).forEach(p -> handles(() -> p.postWrites(id, PUSH_RANKS)));
            case WRITE_COMPLETES -> pushProducers.forEach(p -> {
                int handle = p.firstWriteInProgress(id);
                if (handle >= 0) {
                    p.completeWrite(id, handle);
                }
            });
            case WRITE_FAILS -> pushProducers.forEach(p -> {
                int handle = p.firstWriteInProgress(id);
                if (handle >= 0) {
                    p.failWrite(id, handle);
                }
            });
            // a rank's WRITE still to come of a registered request; before PUSH_REG, or after every rank's, nothing
            case PUSH_LANDS -> pushConsumers.forEach(c -> handles(() -> c.writeLands(id)));
            case PUSH_POST_FAILS -> pushConsumers.forEach(c -> handles(() -> c.postFails(id)));
            case TRANSFERS_COMPLETE -> children.forEach(ChildConnector::finishInFlightTransfers);
            case ITERATION -> throw new IllegalArgumentException("the client does not iterate the busy loop");
        }
    }

    /**
     * A worker event that does not apply now (a NIXL pull still waiting for its handshake has no handle in progress, a
     * push not registered yet has no WRITE to come, a posted push is not posted again): the connector refuses it with
     * nothing changed, so the operation does nothing (operations are total).
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
