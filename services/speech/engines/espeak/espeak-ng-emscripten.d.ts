// The package ships no typings; this declares only the parts of its Emscripten/WebIDL surface we use.
declare module "@echogarden/espeak-ng-emscripten" {
  interface EspeakVoiceStruct {
    readonly ptr: number;
    get_gender(): number;
  }

  interface ListedVoice {
    name: string;
    identifier: string;
    languages: { priority: number; name: string }[];
  }

  interface ESpeakNGWorker {
    get_samplerate(): number;
    list_voices(): ListedVoice[];
    get_voices(index: number): EspeakVoiceStruct;
    /** Returns 0 on success; otherwise the previous voice stays selected. */
    set_voice(name: string): number;
    set_rate(wordsPerMinute: number): void;
    /** The callback runs synchronously per audio block; returning true cancels synthesis. */
    synthesize(text: string, callback: (samples: Int16Array, events: unknown[]) => boolean): void;
  }

  interface EspeakModule {
    eSpeakNGWorker: new () => ESpeakNGWorker;
  }

  interface ModuleOptions {
    print?: (line: string) => void;
    printErr?: (line: string) => void;
    /**
     * Emscripten's hook for a data package fetched elsewhere: the package's bytes (which it keeps
     * and serves its files from, without copying), or null to read espeak-ng.data itself.
     */
    getPreloadedPackage?: (name: string, size: number) => ArrayBuffer | null;
  }

  export default function createEspeakModule(options?: ModuleOptions): Promise<EspeakModule>;
}
