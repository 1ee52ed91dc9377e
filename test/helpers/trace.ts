// The OpenTelemetry SDK, registered as an application would (NodeTracerProvider.register(): the global
// provider, the AsyncLocalStorage context manager, the W3C propagator), exporting to memory so a test
// can read every span wasmcell made.
import { context, propagation, trace } from "@opentelemetry/api";
import {
  InMemorySpanExporter,
  NodeTracerProvider,
  SimpleSpanProcessor,
  type ReadableSpan,
} from "@opentelemetry/sdk-trace-node";

export interface Recorder {
  exporter: InMemorySpanExporter;
  provider: NodeTracerProvider;
  /** The finished spans so far, wasmcell's and the test's own. */
  spans(): ReadableSpan[];
  /** Forgets the spans so far. */
  reset(): void;
  /** Unregisters everything (the API is a no-op again). */
  close(): Promise<void>;
}

export function recordSpans(): Recorder {
  const exporter = new InMemorySpanExporter();
  const provider = new NodeTracerProvider({ spanProcessors: [new SimpleSpanProcessor(exporter)] });
  provider.register();
  return {
    exporter,
    provider,
    spans: () => exporter.getFinishedSpans(),
    reset: () => exporter.reset(),
    close: async () => {
      await provider.shutdown();
      trace.disable();
      context.disable();
      propagation.disable();
    },
  };
}

/** The span's parent span id (SDK 2.x keeps it in `parentSpanContext`). */
export function parentOf(span: ReadableSpan): string | undefined {
  return span.parentSpanContext?.spanId;
}

/** Everything a span carries as text: its name, status, attributes (keys and values) and events. */
export function spanText(span: ReadableSpan): string {
  return JSON.stringify({
    name: span.name,
    status: span.status,
    attributes: span.attributes,
    events: span.events,
    links: span.links,
  });
}
