#include "client/output_path_flag.h"

DEFINE_string(to, "",
              "export: the folder to write the export to (required; must not exist). report: "
              "the HTML file to write (default MODEL_DIR/report.html).");
