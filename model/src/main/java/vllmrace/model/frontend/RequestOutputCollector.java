package vllmrace.model.frontend;

/**
 * Mirrors {@code vllm/v1/engine/output_processor.py}, {@code RequestOutputCollector}: the mailbox a
 * {@code generate()} caller waits on. The model keeps what a caller can tell: how many outputs arrived and
 * whether a final one did (FE3: exactly one final output per collector).
 */
public final class RequestOutputCollector {
    private int numOutputs;
    private int numFinalOutputs;
    private String finishReason;

    synchronized void put(int newTokens, String finishReason) {
        numOutputs++;
        if (finishReason != null) {
            numFinalOutputs++;
            this.finishReason = finishReason;
        }
    }

    public synchronized int numOutputs() {
        return numOutputs;
    }

    public synchronized boolean finished() {
        return numFinalOutputs > 0;
    }

    public synchronized int numFinalOutputs() {
        return numFinalOutputs;
    }

    public synchronized String finishReason() {
        return finishReason;
    }
}
