/* One document, two renderings (doc.c): the Markdown the report tests grep
 * for is unchanged (cells, header separators, headless tables), HTML
 * escapes record text and turns only `code` and **strong** into markup,
 * gnuplot's SVG is inlined with its ids prefixed per figure, an SVG that
 * could run something and any other image become data: URIs, a missing
 * figure is a note, and a code block's fence outgrows the backticks in it. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "doc.h"
#include "fsutil.h"
#include "mapp_error.h"

typedef struct {
  char dir[64];
  char *md, *html; /* the renderings, read back after doc_close */
} rendered;

static void start(rendered *r, doc *d) {
  snprintf(r->dir, sizeof r->dir, "/tmp/mapp-test-doc.XXXXXX");
  assert_non_null(mkdtemp(r->dir));
  char md[128], html[128];
  snprintf(md, sizeof md, "%s/doc.md", r->dir);
  snprintf(html, sizeof html, "%s/doc.html", r->dir);
  assert_int_equal(doc_open(d, r->dir, "a <title>", md, html), MAPP_OK);
}

static void finish(rendered *r, doc *d) {
  assert_int_equal(doc_close(d), MAPP_OK);
  char md[128], html[128];
  snprintf(md, sizeof md, "%s/doc.md", r->dir);
  snprintf(html, sizeof html, "%s/doc.html", r->dir);
  assert_int_equal(read_text_file(md, &r->md), MAPP_OK);
  assert_int_equal(read_text_file(html, &r->html), MAPP_OK);
}

static void cleanup(rendered *r) {
  char command[128];
  snprintf(command, sizeof command, "rm -rf %s", r->dir);
  assert_int_equal(system(command), 0);
  free(r->md);
  free(r->html);
}

static void write_file(const rendered *r, const char *name, const char *text) {
  char *path = path_join(r->dir, name);
  assert_int_equal(write_text_file(path, text), MAPP_OK);
  free(path);
}

static void tables_render_as_the_report_wrote_them(void **state) {
  (void)state;
  rendered r;
  doc d;
  start(&r, &d);
  doc_heading(&d, 2, "Coverage");
  doc_table(&d, "lr");
  doc_cell(&d, "app");
  doc_cell(&d, "unchecked");
  doc_row_end(&d);
  doc_cell(&d, "a|b");
  doc_cell(&d, "**%d**", 1);
  doc_row_end(&d);
  doc_table_end(&d);
  doc_table_plain(&d, "ll");
  doc_cell(&d, "records");
  doc_cell(&d, "6");
  doc_row_end(&d);
  doc_table_end(&d);
  finish(&r, &d);
  assert_string_equal(r.md, "## Coverage\n\n| app | unchecked |\n|---|--:|\n| a\\|b | **1** |\n\n"
                            "| | |\n|---|---|\n| records | 6 |\n\n");
  assert_non_null(strstr(r.html, "<title>a &lt;title&gt;</title>"));
  assert_non_null(strstr(r.html, "<h2>Coverage</h2>\n<div class=\"table\"><table>\n<thead><tr><th>app</th>"
                                 "<th class=\"num\">unchecked</th></tr></thead>\n<tbody><tr><td>a|b</td>"
                                 "<td class=\"num\"><strong>1</strong></td></tr>\n</tbody></table></div>"));
  assert_non_null(strstr(r.html, "<div class=\"table\"><table>\n<tbody><tr><td>records</td><td>6</td></tr>\n"));
  cleanup(&r);
}

static void record_text_is_escaped_and_only_the_two_marks_are_markup(void **state) {
  (void)state;
  rendered r;
  doc d;
  start(&r, &d);
  doc_para(&d, "host %s in `a<b>` and **x & y**, a lone ` and *", "<script>'\"&");
  doc_link(&d, "page one.html", "see <b>");
  finish(&r, &d);
  assert_non_null(strstr(r.html, "<p>host &lt;script&gt;&#39;&quot;&amp; in <code>a&lt;b&gt;</code> and "
                                 "<strong>x &amp; y</strong>, a lone ` and *</p>"));
  assert_non_null(strstr(r.html, "<p><a href=\"page%20one.html\">see &lt;b&gt;</a></p>"));
  assert_null(strstr(r.html, "<script>"));
  assert_non_null(strstr(r.md, "host <script>'\"& in `a<b>` and **x & y**, a lone ` and *\n\n"));
  cleanup(&r);
}

static void gnuplot_svg_is_inlined_with_ids_of_its_own(void **state) {
  (void)state;
  rendered r;
  doc d;
  start(&r, &d);
  const char *svg = "<?xml version=\"1.0\"?>\n<svg viewBox=\"0 0 9 6\">\n<defs><path id='gpPt0' d='M0,0'/></defs>"
                    "<g id=\"gnuplot_plot_1\"><use xlink:href='#gpPt0'/><path clip-path=\"url(#gpClip)\" d='M1,1'/>"
                    "</g></svg>\n";
  write_file(&r, "a.svg", svg);
  write_file(&r, "b.svg", svg);
  doc_figure(&d, "first", "a.png");
  doc_figure(&d, "second", "b.svg");
  finish(&r, &d);
  assert_string_equal(r.md, "![first](a.png)\n\n![second](b.svg)\n\n");
  assert_non_null(strstr(r.html, "<figure><svg class=\"plot\" role=\"img\" aria-label=\"first\" viewBox=\"0 0 9 6\">"));
  assert_non_null(strstr(r.html, "<path id='f1-gpPt0'"));
  assert_non_null(strstr(r.html, "<g id=\"f2-gnuplot_plot_1\"><use xlink:href='#f2-gpPt0'/>"));
  assert_non_null(strstr(r.html, "url(#f1-gpClip)"));
  assert_null(strstr(r.html, "<?xml"));
  assert_non_null(strstr(r.html, "<figcaption>second</figcaption></figure>"));
  cleanup(&r);
}

static void what_cannot_be_inlined_is_an_image_or_a_note(void **state) {
  (void)state;
  rendered r;
  doc d;
  start(&r, &d);
  write_file(&r, "active.svg", "<svg onload=\"x()\"><g/></svg>");
  write_file(&r, "cut.svg", "<svg viewBox=\"0 0 9 6\"><g id=\"gnuplot_plot_1\">");
  write_file(&r, "cut.png", "PNG");
  doc_figure(&d, "active", "active.svg");
  doc_figure(&d, "cut short", "cut.png");
  doc_figure(&d, "gone", "gone.png");
  finish(&r, &d);
  /* "<svg onload=\"x()\"><g/></svg>" in base64 */
  assert_non_null(strstr(r.html, "<img alt=\"active\" src=\"data:image/svg+xml;base64,PHN2ZyBvbmxvYWQ9IngoKSI+PGcvPjwvc3ZnPg==\">"));
  assert_non_null(strstr(r.html, "<img alt=\"cut short\" src=\"data:image/png;base64,UE5H\">"));
  assert_non_null(strstr(r.html, "<p class=\"missing\">Figure missing: gone (<code>gone.png</code>)</p>"));
  assert_null(strstr(r.html, "onload=\"x()\""));
  cleanup(&r);
}

static void a_code_fence_outgrows_the_backticks_in_it(void **state) {
  (void)state;
  rendered r;
  doc d;
  start(&r, &d);
  doc_code(&d, "sh", "echo ```` <done> &\n\n");
  finish(&r, &d);
  assert_string_equal(r.md, "`````sh\necho ```` <done> &\n`````\n\n");
  assert_non_null(strstr(r.html, "<pre><code>echo ```` &lt;done&gt; &amp;</code></pre>"));
  cleanup(&r);
}

static void a_trend_is_a_line_or_blocks(void **state) {
  (void)state;
  rendered r;
  doc d;
  start(&r, &d);
  const double values[] = {100, 100, 80, 80};
  const size_t marks[] = {2};
  doc_table_plain(&d, "l");
  doc_cell_trend(&d, values, 4, marks, 1);
  doc_row_end(&d);
  doc_table_end(&d);
  finish(&r, &d);
  assert_non_null(strstr(r.md, "| \u2588\u2588\u2581\u2581 |"));
  assert_non_null(strstr(r.html, "<td class=\"trend\"><svg viewBox=\"0 0 120 28\""));
  assert_non_null(strstr(r.html, "<line x1=\"60.0\""));
  assert_non_null(strstr(r.html, "points=\"3.0,3.0 41.0,3.0 79.0,25.0 117.0,25.0\""));
  cleanup(&r);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(tables_render_as_the_report_wrote_them),
      cmocka_unit_test(record_text_is_escaped_and_only_the_two_marks_are_markup),
      cmocka_unit_test(gnuplot_svg_is_inlined_with_ids_of_its_own),
      cmocka_unit_test(what_cannot_be_inlined_is_an_image_or_a_note),
      cmocka_unit_test(a_code_fence_outgrows_the_backticks_in_it),
      cmocka_unit_test(a_trend_is_a_line_or_blocks),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
