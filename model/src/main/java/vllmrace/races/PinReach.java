package vllmrace.races;

import java.util.List;
import vllmrace.model.detect.ViolationLog;
import vllmrace.model.frontend.ParentRequest;
import vllmrace.model.kv.BlockPool;
import vllmrace.model.kv.KvCacheBlock;

/** Model paths no race scenario runs at its default point, called directly so every pin is reached by some run. */
final class PinReach {
    // package-private: UpstreamPinUse and its test call it
    private PinReach() {
    }

    static void unitPaths() {
        ParentRequest parent = new ParentRequest("P", "P", 2); // n > 1: other points of the frontend families
        parent.getOutputs(parent.getChildInfo(0), true);
        BlockPool pool = new BlockPool(1, new ViolationLog());
        List<KvCacheBlock> blocks = pool.getNewBlocks(1);
        pool.touch(blocks); // no connector of the model pins a block yet
        pool.freeBlocks(blocks);
        pool.freeBlocks(blocks);
        // the roles a scheduler reads at construction (#45357's gate) and on a preemption (#50297), for a MultiConnector
        vllmrace.model.kv.KvCacheManager kv = new vllmrace.model.kv.KvCacheManager(new BlockPool(1, new ViolationLog()), vllmrace.model.EngineProcess.BLOCK_SIZE, new ViolationLog());
        vllmrace.model.connector.multi.MultiConnector multi = new vllmrace.model.connector.multi.MultiConnector(
                vllmrace.model.fix.FixSet.upstreamMain(),
                List.of(new vllmrace.model.connector.multi.NixlDecodeConnector("NixlConnector", kv, vllmrace.model.fix.FixSet.upstreamMain())));
        multi.requiresKvDelivery();
        multi.isKvConsumer();
    }
}
