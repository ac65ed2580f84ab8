"""What every benchmark and study shares, written once.

- `settings`: a study's setting from the command line (its preset, shrunk by ``--dry``, then any field as a
  flag, by tyro as the CLI's configs are) and the dry pass;
- `machine`: the machine's load and the CPU- and wall seconds around a measurement, kept with its figures;
- `report`: the JSON record, the markdown table and the plot, one function each;
- `stats`: the intervals (a t-interval over seeds, a paired bootstrap over seeds and problems);
- `fake_server` (a fault injector) and `openai_server` (a real `transformers serve`): the OpenAI-compatible
  servers that the served benchmarks and the tests both run.
"""
