package vllmrace.model.frontend;

import vllmrace.model.RaisedByUpstream;

/**
 * {@code OutputProcessor.add_request}'s {@code ValueError("Request id ... already running.")}, which the
 * OpenAI server maps to HTTP 400 (#11036): the caller re-used an id the frontend still tracks.
 */
public final class RequestAlreadyRunningException extends IllegalStateException implements RaisedByUpstream {
    public RequestAlreadyRunningException(String requestId) {
        super("Request id " + requestId + " already running.");
    }
}
