/* test_extract.c - convert --extract's rules (eval/extract.c, docs/eval.md
 * "Code out of raw answers") on a corpus of the shapes models answer in:
 * no fence, one or several fences, an unclosed fence, prose after the code,
 * a fence of another language, ~~~ fences, indented fences, CRLF lines, an
 * empty fence; each row gives the mode, the job's language, the answer and
 * the code and kind of find the rules give; then the cap, the modes' names,
 * and --extract end to end through convert (meta.extract, references
 * untouched). */
#include "test.h"

#include "eval_jobs.h"

#include "eval/convert.h"
#include "eval/extract.h"

struct shape {
    const char *name;
    enum extract_mode mode;
    const char *lang;
    const char *answer;
    const char *code; /* NULL: the answer as it is */
    enum extract_found found;
    const char *tag;
    size_t fences, first_line, last_line;
};

#define PY_FENCE "Here is my solution:\n\n```python\ndef add(a, b):\n    return a + b\n```\n"

static const struct shape shapes[] = {
    {"bare code", EXTRACT_FENCED, "python", "def add(a, b):\n    return a + b\n", NULL,
     EXTRACT_FOUND_NONE, "", 0, 0, 0},
    {"one python fence", EXTRACT_FENCED, "python", PY_FENCE, "def add(a, b):\n    return a + b\n",
     EXTRACT_FOUND_FENCE, "python", 1, 4, 5},
    {"prose after the code", EXTRACT_FENCED, "python",
     PY_FENCE "\nThis adds a and b.\n```\nadd(1, 2)  # 3\n```\nDone.",
     "def add(a, b):\n    return a + b\n", EXTRACT_FOUND_FENCE, "python", 2, 4, 5},
    {"untagged fences joined", EXTRACT_FENCED, "python",
     "```\nimport math\n```\nthen\n```\nprint(math.pi)\n```\n", "import math\n\nprint(math.pi)\n",
     EXTRACT_FOUND_FENCE, "", 2, 2, 6},
    {"first of several", EXTRACT_FIRST_FENCE, "python",
     "```py\nx = 1\n```\n```python3\nx = 2\n```\n", "x = 1\n", EXTRACT_FOUND_FENCE, "py", 2, 2, 2},
    {"last of several", EXTRACT_LAST_FENCE, "python", "```py\nx = 1\n```\n```Python\nx = 2\n```\n",
     "x = 2\n", EXTRACT_FOUND_FENCE, "Python", 2, 5, 5},
    {"another language skipped", EXTRACT_FENCED, "python",
     "In JS:\n```js\nconst x = 1;\n```\nIn Python:\n```python\nx = 1\n```\n", "x = 1\n",
     EXTRACT_FOUND_FENCE, "python", 2, 7, 7},
    {"javascript job takes the js fence", EXTRACT_LAST_FENCE, "javascript",
     "```javascript\nlet a = 1;\n```\n```python\na = 1\n```\n", "let a = 1;\n", EXTRACT_FOUND_FENCE,
     "javascript", 2, 2, 2},
    {"c++ alias", EXTRACT_FENCED, "cpp", "```C++\nint main(){}\n```\n```text\nout\n```\n",
     "int main(){}\n", EXTRACT_FOUND_FENCE, "C++", 2, 2, 2},
    {"untagged beats another language", EXTRACT_FENCED, "python",
     "```bash\npip install x\n```\n```\nimport x\n```\n", "import x\n", EXTRACT_FOUND_FENCE, "", 2,
     5, 5},
    {"only another language: taken", EXTRACT_FENCED, "python", "```rust\nfn main() {}\n```\n",
     "fn main() {}\n", EXTRACT_FOUND_FENCE, "rust", 1, 2, 2},
    {"unclosed fence", EXTRACT_FENCED, "python", "Sure:\n```python\nprint(1)\nprint(2)",
     "print(1)\nprint(2)\n", EXTRACT_FOUND_UNCLOSED, "python", 1, 3, 4},
    {"closed then unclosed", EXTRACT_LAST_FENCE, "python",
     "```python\na = 1\n```\n```python\nb = 2\n", "b = 2\n", EXTRACT_FOUND_UNCLOSED, "python", 2, 5,
     5},
    {"tilde fence", EXTRACT_FENCED, "python", "~~~python\nx = 1\n~~~\n", "x = 1\n",
     EXTRACT_FOUND_FENCE, "python", 1, 2, 2},
    {"backticks inside tildes", EXTRACT_FENCED, "python", "~~~~ python\ns = '''\n```\n'''\n~~~~\n",
     "s = '''\n```\n'''\n", EXTRACT_FOUND_FENCE, "python", 1, 2, 4},
    {"longer closing run", EXTRACT_FENCED, "python", "````python\nx = '```'\n```\n`````\n",
     "x = '```'\n```\n", EXTRACT_FOUND_FENCE, "python", 1, 2, 3},
    {"indented fence (list item)", EXTRACT_FENCED, "python",
     "1. Code:\n    ```python\n    def f():\n        return 1\n    ```\n",
     "def f():\n    return 1\n", EXTRACT_FOUND_FENCE, "python", 1, 3, 4},
    {"CRLF lines", EXTRACT_FENCED, "python", "Code:\r\n```python\r\nx = 1\r\ny = 2\r\n```\r\n",
     "x = 1\ny = 2\n", EXTRACT_FOUND_FENCE, "python", 1, 3, 4},
    {"empty fence", EXTRACT_FENCED, "python", "```python\n```\n", "", EXTRACT_FOUND_FENCE, "python",
     1, 0, 0},
    {"info string with attributes", EXTRACT_FENCED, "python", "```python {linenos=true}\nx\n```\n",
     "x\n", EXTRACT_FOUND_FENCE, "python", 1, 2, 2},
    {"inline triple backticks are no fence", EXTRACT_FENCED, "python", "use ```x``` here\nx = 1\n",
     NULL, EXTRACT_FOUND_NONE, "", 0, 0, 0},
    {"two backticks are no fence", EXTRACT_FENCED, "python", "``\nx = 1\n``\n", NULL,
     EXTRACT_FOUND_NONE, "", 0, 0, 0},
    {"heuristic: fences first", EXTRACT_HEURISTIC, "python", PY_FENCE,
     "def add(a, b):\n    return a + b\n", EXTRACT_FOUND_FENCE, "python", 1, 4, 5},
    {"heuristic: prose around bare code", EXTRACT_HEURISTIC, "python",
     "Sure! Here it is.\nimport math\n\ndef area(r):\n    return math.pi * r * r\n\n"
     "print(area(2))\n\nThis computes the area of a circle.\n",
     "import math\n\ndef area(r):\n    return math.pi * r * r\n\nprint(area(2))\n",
     EXTRACT_FOUND_HEURISTIC, "", 0, 2, 7},
    {"heuristic: assignments and a main block", EXTRACT_HEURISTIC, "python",
     "The program:\nfrom sys import stdin\nn = int(stdin.readline())\nif n > 0:\n    print(n)\n"
     "Explanation: it reads n.\n",
     "from sys import stdin\nn = int(stdin.readline())\nif n > 0:\n    print(n)\n",
     EXTRACT_FOUND_HEURISTIC, "", 0, 2, 5},
    {"heuristic: a tuple assignment goes on, prose with a comma ends it", EXTRACT_HEURISTIC,
     "python", "def f():\n    return 1, 2\na, b = f()\nHowever, f could be faster.\n",
     "def f():\n    return 1, 2\na, b = f()\n", EXTRACT_FOUND_HEURISTIC, "", 0, 1, 3},
    {"heuristic: no code start", EXTRACT_HEURISTIC, "python", "I cannot solve this.\n", NULL,
     EXTRACT_FOUND_NONE, "", 0, 0, 0},
    {"heuristic: not python", EXTRACT_HEURISTIC, "javascript", "Answer:\nfunction f() {}\n", NULL,
     EXTRACT_FOUND_NONE, "", 0, 0, 0},
    {"off", EXTRACT_OFF, "python", PY_FENCE, NULL, EXTRACT_FOUND_NONE, "", 0, 0, 0},
    {"unknown job language", EXTRACT_FIRST_FENCE, NULL, "```\na\n```\n```python\nb\n```\n", "a\n",
     EXTRACT_FOUND_FENCE, "", 2, 2, 2},
};

TEST(extract_corpus_of_answer_shapes)
{
    for (size_t i = 0; i < sizeof(shapes) / sizeof(shapes[0]); i++) {
        const struct shape *s = &shapes[i];
        struct extract_result r;
        struct llmsb_err err = {0};
        struct buf b;
        int rc;

        buf_init(&b, 1 << 16);
        rc = extract_code(s->mode, s->lang, s->answer, strlen(s->answer), &b, &r, &err);
        ASSERT_MSG(rc == 0, s->name);
        ASSERT_MSG(buf_append(&b, "", 1) == 0, s->name);
        ASSERT_MSG(strcmp(b.data, s->code ? s->code : s->answer) == 0, s->name);
        ASSERT_MSG(r.found == s->found, s->name);
        ASSERT_MSG(strcmp(r.fence_lang, s->tag) == 0, s->name);
        ASSERT_MSG(r.fences == s->fences, s->name);
        if (r.first_line != s->first_line || r.last_line != s->last_line)
            fprintf(stderr, "  %s: lines %zu-%zu\n", s->name, r.first_line, r.last_line);
        ASSERT_MSG(r.first_line == s->first_line && r.last_line == s->last_line, s->name);
        ASSERT_MSG(r.raw_len == strlen(s->answer) && r.mode == s->mode, s->name);
        buf_release(&b);
    }
}

TEST(extract_over_the_cap_is_an_error)
{
    struct extract_result r;
    struct llmsb_err err = {0};
    struct buf b;

    buf_init(&b, 8);
    ASSERT_EQ(extract_code(EXTRACT_FENCED, "python", PY_FENCE, strlen(PY_FENCE), &b, &r, &err),
              LLMSB_ERR_LIMIT);
    ASSERT_CONTAINS(err.msg, "is over 8 bytes");
    buf_release(&b);
}

TEST(extract_mode_names)
{
    static const char *const names[] = {"off", "fenced", "first-fence", "last-fence", "heuristic"};
    enum extract_mode m;

    for (int i = 0; i < 5; i++) {
        ASSERT_EQ(extract_mode_parse(names[i], &m), 0);
        ASSERT_STR(extract_mode_name(m), names[i]);
    }
    ASSERT_EQ(extract_mode_parse("fence", &m), -1);
    ASSERT_STR(extract_found_name(EXTRACT_FOUND_UNCLOSED), "unclosed-fence");
}

static const char he_row[] =
    "{\"task_id\": \"T/0\", \"prompt\": \"def f():\\n    \\\"\\\"\\\"One.\\\"\\\"\\\"\\n\", \"entry_point\": \"f\", "
    "\"canonical_solution\": \"```python\\n    return 1\\n```\\n\", "
    "\"test\": \"assert f() == 1\\n\"}\n";

static const char *program(const cJSON *job)
{
    return cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(get(job, "files"), "program.py"));
}

/* The jobs of he_row's samples (NULL: its reference) with extract. */
static int convert(const char *samples, enum extract_mode extract, struct jobs *j,
                   struct llmsb_err *err)
{
    struct convert_set *s = convert_set_read("d.jsonl", he_row, err);
    struct convert_out o = {.name = "mem", .extract = extract};
    int rc;

    if (!s)
        return err->code;
    o.out = open_memstream(&j->text, &j->len);
    rc = convert_write(s, "s.jsonl", samples, &o, err);
    fclose(o.out);
    convert_set_free(s);
    jobs_parse(j);
    return rc;
}

TEST(extract_through_convert_samples_only)
{
    struct llmsb_err err = {0};
    struct jobs j = {0};
    const char *samples = "{\"task_id\": \"T/0\", \"completion\": \"Sure:\\n```python\\n"
                          "def f():\\n    return 1\\n```\\nIt returns 1.\"}\n";

    ASSERT_EQ(convert(samples, EXTRACT_FENCED, &j, &err), 0);
    ASSERT_EQ(j.n, 1);
    ASSERT_STR(program(j.job[0]), "def f():\n    \"\"\"One.\"\"\"\ndef f():\n    return 1\n\n"
                                  "assert f() == 1\n\ncheck(f)\n");
    ASSERT_STR(str(j.job[0], "meta.extract.mode"), "fenced");
    ASSERT_STR(str(j.job[0], "meta.extract.found"), "fence");
    ASSERT_STR(str(j.job[0], "meta.extract.fence_lang"), "python");
    ASSERT_STR(str(j.job[0], "meta.extracted"), "def f():\n    return 1\n");
    ASSERT_EQ(cJSON_GetNumberValue(get(j.job[0], "meta.extract.raw_len")), 55);
    ASSERT_STR(str(j.job[0], "meta.task_id"), "T/0");
    jobs_release(&j);
    /* off: the answer as it is, no meta.extract */
    ASSERT_EQ(convert(samples, EXTRACT_OFF, &j, &err), 0);
    ASSERT_CONTAINS(program(j.job[0]), "```python");
    ASSERT(!get(j.job[0], "meta.extract"));
    jobs_release(&j);
    /* a reference solution is never extracted from */
    ASSERT_EQ(convert(NULL, EXTRACT_FENCED, &j, &err), 0);
    ASSERT_CONTAINS(program(j.job[0]), "```python\n    return 1\n```");
    ASSERT(!get(j.job[0], "meta.extract"));
    jobs_release(&j);
}

TEST_MAIN("extract", T(extract_corpus_of_answer_shapes), T(extract_over_the_cap_is_an_error),
          T(extract_mode_names), T(extract_through_convert_samples_only))
