import { describe, expect, it } from 'vitest';
import { countsFromAnnotation } from '../../../tools/bench/instructions';
import { judgedRatio } from '../../../tools/bench/statistics';

/** The shape of `callgrind_annotate --inclusive=yes` for the Node binary, cut down to the lines that matter. */
const REPORT = `--------------------------------------------------------------------------------
Ir
--------------------------------------------------------------------------------
522,062,852 (100.0%)  PROGRAM TOTALS

--------------------------------------------------------------------------------
Ir                    file:function
--------------------------------------------------------------------------------
   167,930,748 (32.17%)  ???:v8::internal::Compiler::Compile(v8::internal::Isolate*, v8::internal::DirectHandle<v8::internal::JSFunction>, v8::internal::ClearExceptionFlag, v8::internal::IsCompiledScope*) [/node]
   165,608,471 (31.53%)  ???:v8::internal::Compiler::Compile(v8::internal::Isolate*, v8::internal::Handle<v8::internal::SharedFunctionInfo>, v8::internal::ClearExceptionFlag, v8::internal::IsCompiledScope*) [/node]
    57,263,519 (10.97%)  ???:v8::internal::Parser::ParseProgram(v8::internal::Isolate*, v8::internal::DirectHandle<v8::internal::Script>, v8::internal::ParseInfo*, v8::internal::MaybeDirectHandle<v8::internal::ScopeInfo>) [/node]
    12,895,837 ( 2.47%)  ???:v8::internal::Heap::CollectGarbage(v8::internal::AllocationSpace, v8::internal::GarbageCollectionReason, v8::GCCallbackFlags) [/node]
    12,892,309 ( 2.47%)  ???:v8::internal::Heap::CollectGarbage(v8::internal::AllocationSpace, v8::internal::GarbageCollectionReason, v8::GCCallbackFlags)::$_0::operator()() const [/node]
     8,824,489 ( 1.69%)  ???:v8::internal::HashSeed::InitializeRoots(v8::internal::Isolate*) [/node]
     8,571,077 ( 1.64%)  ???:detail::sprp(unsigned long long, unsigned long long) [/node]
`;

describe("the bench's instruction counts", () => {
  it("leave out V8's random start-up work from the total", () => {
    expect(countsFromAnnotation(REPORT).total).toBe(522_062_852 - 8_824_489);
  });

  it('read parsing on load, compiling on first run and GC as the inclusive counts of their V8 functions', () => {
    const counts = countsFromAnnotation(REPORT);
    expect(counts.loadParse).toBe(57_263_519);
    // The JSFunction entry point, which includes the SharedFunctionInfo one it calls.
    expect(counts.firstRunCompile).toBe(167_930_748);
    expect(counts.gc).toBe(12_895_837);
  });

  it('count the whole program, and no parts, for a binary without symbols', () => {
    const counts = countsFromAnnotation(
      REPORT.split('\n')
        .filter((line) => !line.includes('v8::'))
        .join('\n'),
    );
    expect(counts.total).toBe(522_062_852);
    expect([counts.loadParse, counts.firstRunCompile, counts.gc]).toEqual([Number.NaN, Number.NaN, Number.NaN]);
  });
});

describe('a ratio of instruction counts', () => {
  it("is the ratio of the medians, spread over what one run of each side can give: the highest function's to the lowest floor's, and the reverse", () => {
    expect(judgedRatio([100, 104, 102], [100, 99, 101])).toEqual({ ratio: 1.02, spread: Number((104 / 99 - 100 / 101).toFixed(4)) });
    expect(judgedRatio([100, 100, 100], [80, 80, 80])).toEqual({ ratio: 1.25, spread: 0 });
  });
});
