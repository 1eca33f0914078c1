# Asciidoctor extension for the PDF build (antora-assembler.yml): replaces every [mermaid]
# literal block with a PNG rendered offline by render_mermaid.py, so the PDF shows the same
# diagrams as the site instead of their source. Diagrams of one document render in one batch.
require 'json'
require 'open3'

class MermaidImages < Asciidoctor::Extensions::Treeprocessor
  # Extensions get no logger of their own; this one reports through Asciidoctor's, so a
  # diagram that cannot be rendered is a logged error (the build goes on), not a crash.
  include Asciidoctor::Logging
  HERE = File.expand_path(__dir__)
  REPO = File.expand_path('../..', HERE)
  MAX_PT = 480.0 # about the text width of an A4 page with asciidoctor-pdf's default margins

  def process doc
    blocks = doc.find_by(context: :literal) { |b| b.style == 'mermaid' }
    return doc if blocks.empty?
    # Antora's Assembler sets imagesdir to its build directory; a manual asciidoctor-pdf run
    # without one gets build/ rather than files in the repository's root.
    out_dir = File.join(doc.attr('imagesdir', File.join(REPO, 'build')), 'mermaid')
    python = ENV['TR4947_PYTHON'] || File.join(REPO, '.venv', 'bin', 'python')
    python = 'python3' unless File.executable?(python)
    input = JSON.generate(blocks.map { |b| { source: b.source } })
    stdout, stderr, status = Open3.capture3(python, File.join(HERE, 'render_mermaid.py'), out_dir,
                                            stdin_data: input)
    unless status.success?
      logger.error %(mermaid diagrams not rendered for the PDF (#{stderr.strip}); their source is shown instead)
      return doc
    end
    JSON.parse(stdout).zip(blocks).each do |img, block|
      width_pt = img['width'] * 0.75
      attrs = { 'target' => File.join(out_dir, img['file']), 'alt' => 'diagram', 'align' => 'center',
                'pdfwidth' => (width_pt > MAX_PT ? '100%' : %(#{width_pt.round}pt)) }
      attrs['title'] = block.title if block.title?
      image = create_image_block block.parent, attrs
      siblings = block.parent.blocks
      siblings[siblings.index(block)] = image
    end
    doc
  end
end

Asciidoctor::Extensions.register do
  treeprocessor MermaidImages
end
