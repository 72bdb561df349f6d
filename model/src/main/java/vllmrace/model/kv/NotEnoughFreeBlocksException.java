package vllmrace.model.kv;

/**
 * Thrown by {@link BlockPool#getNewBlocks} when fewer blocks are free than asked for. Mirrors upstream's
 * {@code ValueError(f"Cannot get {num_blocks} free blocks from the pool")} in {@code BlockPool.get_new_blocks}.
 * Nothing is allocated when it is thrown.
 */
public final class NotEnoughFreeBlocksException extends IllegalStateException {
    private final int requested;
    private final int free;

    public NotEnoughFreeBlocksException(int requested, int free) {
        super("Cannot get " + requested + " free blocks from the pool (" + free + " free)");
        this.requested = requested;
        this.free = free;
    }

    public int requested() {
        return requested;
    }

    public int free() {
        return free;
    }
}
