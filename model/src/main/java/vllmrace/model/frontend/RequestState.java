package vllmrace.model.frontend;

/**
 * Mirrors {@code vllm/v1/engine/output_processor.py}, {@code RequestState}: the frontend's record of one
 * request. {@code arrivalTime} identifies the frontend request (detector use: matching it to the engine's).
 */
public record RequestState(String requestId, long arrivalTime, RequestOutputCollector queue) {
}
