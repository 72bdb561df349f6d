package vllmrace.lincheck.prove;

import java.util.List;

/** A program: a sequential set-up, two threads run in parallel, then a sequential part after both ended. */
public record Program(List<Call> init, List<Call> thread1, List<Call> thread2, List<Call> post) {
    public Program {
        init = List.copyOf(init);
        thread1 = List.copyOf(thread1);
        thread2 = List.copyOf(thread2);
        post = List.copyOf(post);
    }

    public List<Call> thread(int i) {
        return i == 0 ? thread1 : thread2;
    }

    /** Operations in the parallel part. */
    public int parallelSize() {
        return thread1.size() + thread2.size();
    }

    public int size() {
        return init.size() + parallelSize() + post.size();
    }

    @Override
    public String toString() {
        return "init " + init + ", then " + thread1 + " || " + thread2 + ", then " + post;
    }
}
